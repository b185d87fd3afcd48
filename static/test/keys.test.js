import assert from "node:assert/strict";
import { describe, test } from "node:test";

import { Element, add } from "./dom.js";
import { isTyping, keyAction } from "../keymap.js";
import { onKey } from "../keys.js";
import { S } from "../runstate.js";

describe("keyAction", () => {
  for (const [key, inTimeline, want] of [
    ["j", false, ["move", 1]],
    ["k", true, ["move", -1]],
    // The arrows move the selection in the timeline; elsewhere ↑/↓ are the browser's (scrolling)
    // and ←/→ travel in time.
    ["ArrowDown", true, ["move", 1]],
    ["ArrowUp", true, ["move", -1]],
    ["ArrowDown", false, null],
    ["ArrowUp", false, null],
    ["ArrowLeft", false, ["step", -1]],
    ["ArrowRight", true, ["step", 1]],
    // Home and End: the first and last rows in the timeline, the first and last events elsewhere.
    ["Home", true, ["move", -Infinity]],
    ["End", true, ["move", Infinity]],
    ["Home", false, ["step", -Infinity]],
    ["End", false, ["step", Infinity]],
    ["/", false, ["search"]],
    ["Enter", true, ["activate"]],
    [" ", false, ["activate"]],
    ["Escape", false, ["escape"]],
    // + - 0 zoom the view they are in, the tree or a time view, alike: 0 is Fit in each; 1
    // shows the tree 1:1.
    ["+", false, ["zoom", 1]],
    ["=", true, ["zoom", 1]],
    ["-", false, ["zoom", -1]],
    ["0", false, ["zoom", 0]],
    ["1", false, ["actual"]],
    ["x", false, null],
    ["Tab", true, null],
  ]) {
    test(JSON.stringify(key) + (inTimeline ? " in the timeline" : " elsewhere"), () => {
      assert.deepEqual(keyAction(key, inTimeline), want);
    });
  }
});

test("isTyping: fields and editable elements take their own keys", () => {
  for (const tag of ["input", "textarea", "select"]) assert.equal(isTyping(new Element(tag)), true, tag);
  assert.equal(isTyping(new Element("div", { isContentEditable: true })), true);
  for (const tag of ["div", "button", "li"]) assert.equal(isTyping(new Element(tag)), false, tag);
  assert.equal(isTyping(null), false);
});

// key is a keydown event on target that records whether the page took it.
function key(k, target, mods) {
  return { key: k, target, prevented: false, preventDefault() { this.prevented = true; }, ...mods };
}

describe("onKey", () => {
  test("leaves keys with a modifier to the browser", () => {
    for (const mod of ["ctrlKey", "metaKey", "altKey"]) {
      const ev = key("j", new Element("div"), { [mod]: true });
      onKey(ev);
      assert.equal(ev.prevented, false, mod);
    }
  });

  test("in a field, keys are the field's; Esc leaves it", () => {
    const field = new Element("input");
    field.focus();
    const j = key("j", field);
    onKey(j);
    assert.equal(j.prevented, false);
    assert.equal(field.focused, true);
    const esc = key("Escape", field);
    onKey(esc);
    assert.equal(esc.prevented, false);
    assert.equal(field.focused, false);
  });

  test("a key the page does not use goes on to the browser", () => {
    const ev = key("ArrowDown", new Element("div"));
    onKey(ev);
    assert.equal(ev.prevented, false);
  });

  test("/ shows the timeline and focuses its search", () => {
    const search = add(new Element("input", { id: "filter-text" }));
    S.tab = "session";
    const ev = key("/", new Element("div"));
    onKey(ev);
    assert.equal(ev.prevented, true);
    assert.equal(S.tab, "timeline");
    assert.equal(search.focused, true);
  });
});
