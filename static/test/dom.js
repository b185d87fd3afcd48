// A small stand-in for the browser's globals, so that Node's test runner (`node --test`, no npm
// packages) can import the page's modules and run their logic. It is not a DOM: an element is a
// plain object with the properties the modules use, document.getElementById finds the elements a
// test added with add(), and document.querySelector(All) answer only the selectors a test gave
// with select(). Importing this module installs the globals; import it before the module under
// test (or import that module with await import(...) after setting the page up).

// Element is an element as far as the modules under test touch it.
export class Element {
  constructor(tag, props) {
    this.tagName = tag.toUpperCase();
    this.id = "";
    this.className = "";
    this.dataset = {};
    this.hidden = false;
    this.textContent = "";
    this.value = "";
    this.checked = false;
    this.disabled = false;
    this.children = [];
    this.parentElement = null;
    this.attributes = new Map();
    this.classList = new ClassList(this);
    this.style = { props: new Map(), setProperty(k, v) { this.props.set(k, v); }, removeProperty(k) { this.props.delete(k); } };
    this.listeners = new Map();
    this.focused = false;
    this.innerHTMLWrites = 0; // the modules put trace text through textContent, never markup
    Object.assign(this, props);
  }
  set innerHTML(html) { this.innerHTMLWrites++; this.html = html; }
  get innerHTML() { return this.html || ""; }
  get options() { return this.children; } // a <select>'s options
  get lastElementChild() { return this.children[this.children.length - 1] || null; }
  setAttribute(k, v) { this.attributes.set(k, String(v)); }
  getAttribute(k) { return this.attributes.has(k) ? this.attributes.get(k) : null; }
  removeAttribute(k) { this.attributes.delete(k); }
  hasAttribute(k) { return this.attributes.has(k); }
  toggleAttribute(k, on) {
    if (on === undefined) on = !this.attributes.has(k);
    if (on) this.attributes.set(k, ""); else this.attributes.delete(k);
    return on;
  }
  appendChild(el) { el.parentElement = this; this.children.push(el); return el; }
  append(...els) { for (const el of els) this.appendChild(el); }
  replaceChildren(...els) { this.children = []; this.append(...els); }
  addEventListener(type, fn) { this.listeners.set(type, fn); }
  focus() { this.focused = true; }
  blur() { this.focused = false; }
  closest() { return null; }
}

class ClassList {
  constructor(el) { this.el = el; }
  get set() { return new Set(this.el.className.split(" ").filter(Boolean)); }
  write(s) { this.el.className = Array.from(s).join(" "); }
  add(c) { const s = this.set; s.add(c); this.write(s); }
  remove(c) { const s = this.set; s.delete(c); this.write(s); }
  contains(c) { return this.set.has(c); }
  toggle(c, on) {
    if (on === undefined) on = !this.contains(c);
    if (on) this.add(c); else this.remove(c);
    return on;
  }
}

const byId = new Map();
const selectors = new Map();

// add makes el findable by its id and returns it.
export function add(el) {
  byId.set(el.id, el);
  return el;
}

// select makes document.querySelectorAll(selector) answer els (and querySelector the first).
export function select(selector, els) {
  selectors.set(selector, els);
}

// reset forgets every element and selector a test set up.
export function reset() {
  byId.clear();
  selectors.clear();
  document.body = new Element("body");
}

const document = {
  body: new Element("body"),
  getElementById: (id) => byId.get(id) || null,
  querySelector: (sel) => (selectors.get(sel) || [])[0] || null,
  querySelectorAll: (sel) => selectors.get(sel) || [],
  createElement: (tag) => new Element(tag),
  addEventListener() {},
};

// The address: history.replaceState moves it as a browser would.
const location = {
  protocol: "http:", host: "127.0.0.1:7070", pathname: "/", search: "", hash: "",
  get origin() { return this.protocol + "//" + this.host; },
  get href() { return this.origin + this.pathname + this.search + this.hash; },
};

// go sets the address to url, resolved against the address as it is (so "#seq=3" keeps the
// path and the query, as in a browser).
export function go(url) {
  const u = new URL(url, "http://" + location.host + location.pathname + location.search + location.hash);
  location.pathname = u.pathname;
  location.search = u.search;
  location.hash = u.hash;
}

const history = { replaceState: (_state, _title, url) => go(url) };

Object.assign(globalThis, {
  document,
  location,
  history,
  window: globalThis,
  addEventListener() {},
  localStorage: storage(),
});

function storage() {
  const m = new Map();
  return {
    getItem: (k) => (m.has(k) ? m.get(k) : null),
    setItem: (k, v) => m.set(k, String(v)),
    removeItem: (k) => m.delete(k),
    clear: () => m.clear(),
  };
}
