/**
 * The peer engine's side of `python -m bench.peer_perf`: glove-memory's forms engine
 * (TypeScript), driven through its public API from a checkout of its sources that this
 * repository does not hold (bench/peer/README.md). `bench.peer_perf` bundles this file with
 * esbuild, aliasing `glove-peer` to the checkout's root, and runs it under Node.
 *
 * Protocol (one line each way, so the Python side decides the interleaving):
 *   out: {"ready": true, "per_instance": N}   once every case has been set up, checked and
 *        warmed; N: the calls each instance takes before a fresh one (the report says it)
 *   in:  "<fields> <rounds>"   e.g. "14 400"
 *   out: {"fields", "median_us", "calls"}   the median of `rounds` timed calls
 *   in:  "quit" (or end of input)
 *
 * The call timed: the fill tool's input {values: {<field>: "Lisbon" | "Porto"}} parsed with
 * its schema (as the peer's agent loop does before running a tool), its `do`, then
 * JSON.stringify of the result (the whole call an agent makes), on a fresh instance every
 * 100 calls (the peer's cost grows with an instance's history, Formwork's does not: a block
 * of any length sees the same histories, a conversation's worth at most). Forms:
 *   14  the peer's own travel claim (examples/forms-bench), step 1 answered, step 2 open
 *   50  five steps of ten text fields, each step applying once the one before is complete;
 *       steps 1-2 answered, the writes go to step 3 (Formwork's synthetic form has that state)
 */
import { z } from "zod";
import { MemorySchema } from "glove-memory/core/schema";
import { InMemoryFormAdapter } from "glove-memory/in-memory/forms";
import { defineForm, FormRegistry, FormRunner } from "glove-memory/forms";
import { buildFormFillTool } from "glove-memory/tools/forms/fill";
import { travelClaim } from "glove-peer/examples/forms-bench/src/form";

type Values = Record<string, unknown>;

interface Shape {
  definition: any;
  answered: Values;
  field: string;
  step: string;
}

function travel(): Shape {
  return {
    definition: travelClaim,
    answered: { fullName: "Ada Lovelace", staffId: "AB-1234", email: "ada@example.com" },
    field: "destination",
    step: "trip",
  };
}

function fifty(): Shape {
  let form: any = defineForm({
    id: "synthetic-50",
    version: 1,
    name: "Fifty fields",
    description: "Five steps of ten fields, each applying once the one before is complete.",
  });
  const answered: Values = {};
  for (let s = 1; s <= 5; s += 1) {
    const gate = s > 1 ? { when: (_v: unknown, at: any) => at.stepComplete(`s${s - 1}`) } : {};
    form = form.step(`s${s}`, { title: `Step ${s}`, ...gate }, (step: any) => {
      let built = step;
      for (let f = 1; f <= 10; f += 1) {
        built = built.field(`f${s}_${f}`, { schema: z.string().min(1), label: `Field ${s}.${f}` });
        if (s < 3) answered[`f${s}_${f}`] = `answer ${s}.${f}`;
      }
      return built;
    });
  }
  return { definition: form.build(), answered, field: "f3_1", step: "s3" };
}

const SHAPES: Record<string, () => Shape> = { "14": travel, "50": fifty };
const PER_INSTANCE = 100;
let subjects = 0;

/** A started instance with the shape's earlier steps answered, and the call to time. */
async function prepared(fields: string): Promise<() => Promise<unknown>> {
  const shape = SHAPES[fields]();
  const adapter = new InMemoryFormAdapter({ schema: new MemorySchema() });
  const registry = new FormRegistry().register(shape.definition.id, {
    name: shape.definition.name,
    description: shape.definition.description,
    load: () => shape.definition,
  });
  subjects += 1;
  const runner = new FormRunner(adapter, {
    registry,
    subject: `subject-${subjects}`,
    actor: "bench",
    source: "formwork-bench",
  });
  await runner.start(shape.definition.id);
  const before = await runner.fill(shape.answered);
  if (before.issues.length > 0 || before.view.step?.id !== shape.step) {
    throw new Error(`the ${fields}-field form did not reach ${shape.step}: ${JSON.stringify(before.view.step)}`);
  }
  const tool = buildFormFillTool(runner);
  let n = 0;
  const value = () => ((n += 1) % 2 === 0 ? "Lisbon" : "Porto");
  // The agent's call: the framework parses the model's input against the tool's schema
  // (glove-core's executor, safeParse) before `do`; Formwork's call validates its input too.
  const call = async (sent: string): Promise<any> => {
    const parsed = tool.inputSchema.safeParse({ values: { [shape.field]: sent } });
    if (!parsed.success) throw new Error(`the peer's schema refused the input: ${parsed.error}`);
    return tool.do(parsed.data as any);
  };
  const check = await call("Faro");
  if (check.status !== "success" || !check.data?.captured?.includes(shape.field)) {
    throw new Error(`the peer refused the write: ${JSON.stringify(check)}`);
  }
  return async () => JSON.stringify(await call(value()));
}

/** The median of `rounds` timed calls, on a fresh instance every `PER_INSTANCE` calls (made
 * outside the timing): the peer's cost grows with an instance's history, so each block sees
 * the same histories, from none to a conversation's worth, whatever its length. */
async function median(fields: string, rounds: number): Promise<number> {
  const times: number[] = [];
  let call = await prepared(fields);
  for (let i = 0; i < rounds; i += 1) {
    if (i > 0 && i % PER_INSTANCE === 0) call = await prepared(fields);
    const start = process.hrtime.bigint();
    await call();
    times.push(Number(process.hrtime.bigint() - start) / 1000);
  }
  times.sort((a, b) => a - b);
  const mid = times.length >> 1;
  return times.length % 2 === 1 ? times[mid] : (times[mid - 1] + times[mid]) / 2;
}

async function warm(fields: string): Promise<void> {
  const call = await prepared(fields);
  const until = performance.now() + 500;
  while (performance.now() < until) await call();
}

async function* lines(): AsyncGenerator<string> {
  let pending = "";
  for await (const chunk of process.stdin) {
    pending += chunk;
    let end = pending.indexOf("\n");
    while (end >= 0) {
      yield pending.slice(0, end).trim();
      pending = pending.slice(end + 1);
      end = pending.indexOf("\n");
    }
  }
}

async function main(): Promise<void> {
  process.stdin.setEncoding("utf8");
  for (const fields of Object.keys(SHAPES)) await warm(fields);
  console.log(JSON.stringify({ ready: true, per_instance: PER_INSTANCE }));
  for await (const line of lines()) {
    if (line === "quit") break;
    const [fields, rounds] = line.split(" ");
    const us = await median(fields, Number(rounds));
    console.log(JSON.stringify({ fields: Number(fields), median_us: us, calls: Number(rounds) }));
  }
}

main().catch((error) => {
  console.error(error);
  process.exit(1);
});
