"""memory-bench: does memory write the right values into forms, and only those?

A labelled set of principals and cases (``cases``) plays through the real ``FormService``
with memory, in process (``harness``): each case sets up what a principal's memory holds (as
the fact API and earlier conversations put it there), measures one ``form_start`` under its
conditions (memory on or off, a racing answer, a slow or failing fact store on a virtual timer:
``virtual``), and says what must become of every field that declares a fact key. ``grading``
compares the two and counts what must never happen (wrong values written, absent facts
filled, stale facts filled silently, answers overwritten, recalls with memory off, forms that
opened late because of memory), before the coverage (fields filled, offered); ``report``
prints and writes them. Run: ``python -m bench.memory_bench [--publish]``.
"""
