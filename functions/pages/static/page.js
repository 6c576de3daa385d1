// The form page's own script (docs/pages.md, "Live updates"). The pages work fully without
// it: it adds two things.
//
// 1. On the form page (#form-page): while the tab is visible it asks the page's version
//    route about every 700 ms; when the instance's version moves it fetches the page again
//    and swaps in the new content, keeping whatever the person has typed and not saved: a
//    field whose form is changed or focused keeps its form as it is (with the hidden
//    version and seen values it was rendered with, so saving it goes through the server's
//    merge check), and says so when the agent changed that field meanwhile. One polite live
//    region announces each update.
// 2. On a link's entry page (form.open): a second press of "Open your form" posts nothing
//    (the first post spends the link).
// 3. On the builder's canvas (#canvas, its address in data-page-url): the same following, of
//    the draft's version, so the agent's tool calls show as they land.
//
// No library, no build step: plain DOM calls, served by the function from this package.
(function () {
  "use strict";

  var POLL_MS = 700;
  var MAX_DELAY_MS = 30000;
  var NOTE_CLASS = "live-note";

  // ------------------------------------------------------------------ the entry page

  function guardEntry(form) {
    form.addEventListener("submit", function (event) {
      if (form.getAttribute("data-sent")) {
        event.preventDefault();
        return;
      }
      form.setAttribute("data-sent", "1");
      form.setAttribute("aria-busy", "true");
      each(form.querySelectorAll("button"), function (button) {
        button.disabled = true;
      });
    });
    // back to a page restored from the back/forward cache: the button works again
    window.addEventListener("pageshow", function (event) {
      if (!event.persisted) return;
      form.removeAttribute("data-sent");
      form.removeAttribute("aria-busy");
      each(form.querySelectorAll("button"), function (button) {
        button.disabled = false;
      });
    });
  }

  // ------------------------------------------------------------------ what the person typed

  function each(list, visit) {
    Array.prototype.forEach.call(list, visit);
  }

  function some(list, test) {
    return Array.prototype.some.call(list, test);
  }

  function holdsValue(el) {
    var tag = el.tagName;
    if (tag === "TEXTAREA" || tag === "SELECT") return true;
    if (tag !== "INPUT") return false;
    return !/^(hidden|submit|button|reset|image)$/.test(el.type);
  }

  function changed(el) {
    if (!holdsValue(el)) return false;
    if (el.tagName === "SELECT") {
      var chosen = some(el.options, function (o) {
        return o.defaultSelected;
      });
      if (!chosen && !el.multiple) return el.selectedIndex > 0;
      return some(el.options, function (o) {
        return o.selected !== o.defaultSelected;
      });
    }
    if (el.type === "checkbox" || el.type === "radio") return el.checked !== el.defaultChecked;
    if (el.type === "file") return !!(el.files && el.files.length);
    return el.value !== el.defaultValue;
  }

  // a form the person is using: a control changed from what the page rendered, or focused,
  // or an entry the server refused and shows again to be put right (the value it rendered
  // is the person's, not the answer in force)
  function inUse(form) {
    var active = document.activeElement;
    if (active && form.contains(active) && holdsValue(active)) return true;
    if (form.querySelector('[aria-invalid="true"]')) return true;
    var li = form.closest("li[data-field]");
    if (li && li.querySelector(".field-problem") && some(form.elements, holdsValue)) return true;
    return some(form.elements, changed);
  }

  // ------------------------------------------------------------------ where things are

  function fieldOf(node) {
    var li = node.closest ? node.closest("li[data-field]") : null;
    return li ? li.getAttribute("data-field") : "";
  }

  function forms(root) {
    return root.querySelectorAll("form");
  }

  // a form's place on the page, to find the same form in a newer copy of it: its field, its
  // class, where it posts, and how many such forms come before it
  function formKeys(root) {
    var seen = {};
    var keys = new Map();
    each(forms(root), function (form) {
      var base = [fieldOf(form), form.className, form.getAttribute("action") || ""].join("|");
      seen[base] = (seen[base] || 0) + 1;
      keys.set(form, base + "|" + seen[base]);
    });
    return keys;
  }

  var FOCUSABLE = "a[href], button, input, select, textarea, summary, [tabindex]";

  // where the focused element is, to focus the same one in the newer copy
  function focusPlace(root) {
    var active = document.activeElement;
    if (!active || active === document.body || !root.contains(active)) return null;
    if (active.id) return { id: active.id };
    var field = fieldOf(active);
    var scope = field ? active.closest("li[data-field]") : root;
    var index = Array.prototype.indexOf.call(scope.querySelectorAll(FOCUSABLE), active);
    return { field: field, index: index };
  }

  function refocus(root, place) {
    if (!place) return;
    var target = null;
    if (place.id) {
      target = document.getElementById(place.id);
    } else if (place.index >= 0) {
      var scope = place.field ? byField(root, place.field) : root;
      target = scope ? scope.querySelectorAll(FOCUSABLE)[place.index] : null;
    }
    if (target && root.contains(target) && document.activeElement !== target) {
      target.focus({ preventScroll: true });
    }
  }

  function byField(root, id) {
    var found = null;
    each(root.querySelectorAll("li[data-field]"), function (li) {
      if (!found && li.getAttribute("data-field") === id) found = li;
    });
    return found;
  }

  function text(node, selector) {
    var found = node ? node.querySelector(selector) : null;
    return found ? found.textContent.replace(/\s+/g, " ").trim() : "";
  }

  // what a field shows, apart from its forms: its value and its state
  function shown(li) {
    return text(li, ".value") + "\u0000" + text(li, ".badge");
  }

  function seenOf(node) {
    var input = node ? node.querySelector('input[name="seen"]') : null;
    return input ? input.value : null;
  }

  // ------------------------------------------------------------------ swapping

  // ``next`` (an element of this document, not yet shown) takes ``root``'s place; the forms
  // the person is using move into it, in place of their newer copies. What changed, in words.
  function swap(root, next) {
    var active = document.activeElement;
    var caret = null;
    if (active && typeof active.selectionStart === "number") {
      try {
        caret = [active.selectionStart, active.selectionEnd, active.selectionDirection];
      } catch (ignored) {
        caret = null;
      }
    }
    var place = focusPlace(root);
    var oldKeys = formKeys(root);
    var newKeys = formKeys(next);
    var newByKey = new Map();
    newKeys.forEach(function (key, form) {
      newByKey.set(key, form);
    });
    var keptFields = {};
    each(forms(root), function (form) {
      if (!inUse(form)) return;
      var field = fieldOf(form);
      var key = oldKeys.get(form);
      var newer = newByKey.get(key);
      var seen = [seenOf(form), seenOf(newer || byField(next, field))];
      if (newer) {
        newer.replaceWith(form);
      } else if (field && byField(next, field)) {
        byField(next, field).appendChild(form);
      } else {
        return; // the form is gone from the page (the instance closed): nothing to keep it in
      }
      if (field) {
        keptFields[field] = keptFields[field] || [];
        keptFields[field].push(seen);
      }
    });
    // the answer to the person's last post ("Saved", or what was wrong) stays until the
    // page is loaded again: a refetched page has none of its own
    var notice = root.querySelector("#notice");
    if (notice && !next.querySelector("#notice")) {
      var summary = next.querySelector(".summary");
      if (summary) {
        summary.insertAdjacentElement("afterend", notice);
      } else {
        next.insertBefore(notice, next.firstChild);
      }
    }
    // history lists the person opened stay open
    var opened = {};
    each(root.querySelectorAll("details[open]"), function (details) {
      opened[fieldOf(details) + "|" + indexIn(root, details)] = true;
    });
    each(next.querySelectorAll("details"), function (details) {
      if (opened[fieldOf(details) + "|" + indexIn(next, details)]) details.open = true;
    });
    var updated = [];
    var keptChanged = [];
    each(next.querySelectorAll("li[data-field]"), function (li) {
      var id = li.getAttribute("data-field");
      var before = byField(root, id);
      var moved = before ? shown(before) !== shown(li) : true;
      var label = text(li, ".label") || id;
      if (moved) updated.push(label);
      if (!keptFields[id]) return;
      // the field moved on since the kept form was rendered (its ``seen`` is older)
      var stale = keptFields[id].some(function (seen) {
        return seen[0] !== null && seen[1] !== null && seen[0] !== seen[1];
      });
      var noted = before && before.querySelector("." + NOTE_CLASS);
      if (stale || moved || noted) {
        note(li);
        keptChanged.push(label);
      }
    });
    root.replaceWith(next);
    if (active && next.contains(active) && document.activeElement !== active) {
      active.focus({ preventScroll: true });
      if (caret) {
        try {
          active.setSelectionRange(caret[0], caret[1], caret[2]);
        } catch (ignored) {
          // not a text control
        }
      }
    } else {
      refocus(next, place);
    }
    return { updated: updated, kept: keptChanged };
  }

  function indexIn(root, node) {
    return Array.prototype.indexOf.call(root.querySelectorAll(node.tagName), node);
  }

  function note(li) {
    var value = text(li, ".value") || text(li, ".badge") || "changed";
    var p = document.createElement("p");
    p.className = NOTE_CLASS;
    p.setAttribute("role", "status");
    p.textContent =
      "Changed while you were typing: now " +
      value +
      ". Your entry is kept; saving it replaces that answer.";
    var head = li.querySelector(".field-head");
    if (head) {
      head.insertAdjacentElement("afterend", p);
    } else {
      li.insertBefore(p, li.firstChild);
    }
  }

  // ------------------------------------------------------------------ following the instance

  function follow(root) {
    var instance = root.getAttribute("data-instance");
    var pageUrl =
      root.getAttribute("data-page-url") ||
      (instance ? "/pages/forms/" + encodeURIComponent(instance) : "");
    if (!pageUrl || !window.fetch || !window.DOMParser) return;
    var versionUrl = pageUrl + "/version";
    var version = root.getAttribute("data-version");
    var delay = POLL_MS;
    var timer = null;
    var busy = false;
    var stopped = false;
    var region = document.createElement("p");
    region.className = "visually-hidden live-region";
    region.setAttribute("role", "status");
    region.setAttribute("aria-live", "polite");
    root.insertAdjacentElement("afterend", region);

    function announce(message) {
      region.textContent = "";
      window.setTimeout(function () {
        region.textContent = message;
      }, 50);
    }

    function stop(message) {
      stopped = true;
      window.clearTimeout(timer);
      if (message) {
        region.classList.remove("visually-hidden");
        region.classList.add("notice");
        announce(message);
      }
    }

    function schedule(ms) {
      window.clearTimeout(timer);
      timer = null;
      if (!stopped && !document.hidden) timer = window.setTimeout(poll, ms);
    }

    function get(url, accept) {
      return window.fetch(url, {
        credentials: "same-origin",
        cache: "no-store",
        redirect: "error",
        headers: { Accept: accept },
      });
    }

    var ENDED =
      "This page has stopped following changes: its session has ended. " +
      "Ask in your conversation for a new link.";

    function refresh() {
      return get(pageUrl, "text/html").then(function (response) {
        if (response.status === 404) return stop(ENDED);
        if (!response.ok) throw new Error("page " + response.status);
        return response.text().then(function (html) {
          if (stopped) return;
          var parsed = new DOMParser().parseFromString(html, "text/html");
          var fresh = parsed.getElementById(root.id);
          if (!fresh) throw new Error("no " + root.id);
          var next = document.importNode(fresh, true);
          var what = swap(root, next);
          root = next;
          version = root.getAttribute("data-version");
          if (parsed.title) document.title = parsed.title;
          var words = what.updated.length
            ? "Updated: " + what.updated.join(", ") + "."
            : "The form was updated.";
          if (what.kept.length) {
            words += " Your unsaved entry is kept in " + what.kept.join(", ") + ".";
          }
          announce(words);
        });
      });
    }

    function poll() {
      timer = null;
      if (busy || stopped || document.hidden) return;
      busy = true;
      get(versionUrl, "application/json")
        .then(function (response) {
          if (response.status === 404) return stop(ENDED);
          if (!response.ok) throw new Error("version " + response.status);
          return response.json().then(function (body) {
            if (!stopped && String(body.version) !== String(version)) return refresh();
          });
        })
        .then(
          function () {
            delay = POLL_MS;
          },
          function () {
            delay = Math.min(delay * 2, MAX_DELAY_MS); // back off while it fails
          }
        )
        .then(function () {
          busy = false;
          schedule(delay);
        });
    }

    document.addEventListener("visibilitychange", function () {
      if (document.hidden) {
        window.clearTimeout(timer);
        timer = null;
      } else {
        schedule(0);
      }
    });
    // a form posted: the page is leaving, so nothing is swapped under it
    document.addEventListener("submit", function (event) {
      if (!event.defaultPrevented) stop("");
    });
    window.addEventListener("pagehide", function () {
      stop("");
    });
    window.addEventListener("pageshow", function (event) {
      if (event.persisted) {
        stopped = false;
        schedule(0);
      }
    });
    schedule(POLL_MS);
  }

  function start() {
    each(document.querySelectorAll("form.open"), guardEntry);
    var root = document.getElementById("form-page") || document.getElementById("canvas");
    if (root) follow(root);
  }

  if (document.readyState === "loading") {
    document.addEventListener("DOMContentLoaded", start);
  } else {
    start();
  }
})();
