// A tiny DOM builder. It only ever sets text (as text nodes) and attributes, never HTML, so text
// from a feed or the catalog cannot become markup. Event handlers are functions, never strings.

const SVG_NS = "http://www.w3.org/2000/svg";

// Properties set as properties rather than attributes.
const PROPERTIES = new Set(["value", "checked", "disabled", "hidden", "selected", "indeterminate"]);

/**
 * h("button", {class: "btn", type: "button", on: {click}, aria: {label: "Pause"}}, "text", child)
 * - `class` may be a string or an array (falsy entries skipped);
 * - `data` / `aria` objects set data-* / aria-* attributes;
 * - `on` adds event listeners;
 * - `text` sets textContent;
 * - anything else is an attribute (null/undefined/false: not set). Attributes named on* or
 *   style are refused: handlers are functions and styling lives in css/ (CSP).
 */
export function h(tag, props = null, ...children) {
  const el = document.createElement(tag);
  if (props) applyProps(el, props);
  append(el, children);
  return el;
}

function applyProps(el, props) {
  for (const [key, value] of Object.entries(props)) {
    if (value === null || value === undefined || value === false) continue;
    if (key === "class") {
      const names = Array.isArray(value) ? value.filter(Boolean).join(" ") : value;
      if (names) el.setAttribute("class", names);
    } else if (key === "text") {
      el.textContent = String(value);
    } else if (key === "on") {
      for (const [type, handler] of Object.entries(value)) el.addEventListener(type, handler);
    } else if (key === "data") {
      for (const [name, v] of Object.entries(value)) if (v !== null && v !== undefined) el.dataset[name] = String(v);
    } else if (key === "aria") {
      for (const [name, v] of Object.entries(value)) if (v !== null && v !== undefined) el.setAttribute(`aria-${name}`, String(v));
    } else if (PROPERTIES.has(key)) {
      el[key] = value;
    } else if (/^on/i.test(key) || key === "style" || key === "innerHTML" || key === "outerHTML") {
      throw new Error(`h(): refusing to set '${key}'`);
    } else {
      el.setAttribute(key, value === true ? "" : String(value));
    }
  }
}

/** Appends children: nodes, strings and numbers (as text), arrays; null/false/undefined skipped. */
export function append(el, children) {
  for (const child of children.flat(Infinity)) {
    if (child === null || child === undefined || child === false || child === true) continue;
    el.append(child instanceof Node ? child : document.createTextNode(String(child)));
  }
  return el;
}

/** Replaces every child of `el`. */
export function replace(el, ...children) {
  el.replaceChildren();
  return append(el, children);
}

/** An icon from the sprite: <svg class="icon"><use href="/img/icons.svg#i-NAME"></use></svg>. */
export function icon(name, className = "") {
  const svg = document.createElementNS(SVG_NS, "svg");
  svg.setAttribute("class", `icon ${className}`.trim());
  svg.setAttribute("aria-hidden", "true");
  svg.setAttribute("focusable", "false");
  const use = document.createElementNS(SVG_NS, "use");
  use.setAttribute("href", `/img/icons.svg#i-${name}`);
  svg.append(use);
  return svg;
}

/** A button with an icon and a visible label, or (iconOnly) an accessible name only. */
export function button(label, { icon: iconName, kind = "", onClick, iconOnly = false, type = "button", ...rest } = {}) {
  const classes = ["btn", kind && `btn-${kind}`, iconOnly && "btn-icon"];
  return h(
    "button",
    { type, class: classes, on: onClick ? { click: onClick } : null, aria: iconOnly ? { label } : null, title: iconOnly ? label : null, ...rest },
    iconName ? icon(iconName) : null,
    iconOnly ? null : h("span", { class: "btn-label", text: label }),
  );
}

/**
 * An icon button for a destructive action that asks once more, in place: the first click grows
 * the label `question` (and the accessible name `confirmLabel`) for 4 s; a second click within
 * that time calls `onConfirm()`.
 */
export function confirmButton(label, { question, confirmLabel, onConfirm, icon: iconName = "trash", kind = "ghost-danger" }) {
  const b = button(label, { icon: iconName, iconOnly: true, kind });
  let timer = null;
  b.addEventListener("click", async () => {
    if (!b.classList.contains("confirming")) {
      b.classList.add("confirming");
      b.setAttribute("aria-label", confirmLabel);
      b.append(h("span", { class: "btn-label", text: question }));
      timer = setTimeout(() => {
        b.classList.remove("confirming");
        b.setAttribute("aria-label", label);
        b.querySelector(".btn-label")?.remove();
      }, 4000);
      return;
    }
    clearTimeout(timer);
    await onConfirm();
  });
  return b;
}

/**
 * Keeps `container`'s children in the order of `items`, reusing the element made for each key:
 * `create(item)` returns {el, update(item)}; `update` is called for every item each time.
 * Returns the map of rows by key.
 */
export function reconcile(container, rows, items, keyOf, create) {
  const seen = new Set();
  let previous = null;
  for (const item of items) {
    const key = keyOf(item);
    seen.add(key);
    let row = rows.get(key);
    if (!row) {
      row = create(item);
      rows.set(key, row);
    }
    row.update(item);
    const expected = previous ? previous.nextSibling : container.firstChild;
    if (expected !== row.el) container.insertBefore(row.el, expected);
    previous = row.el;
  }
  for (const [key, row] of rows) {
    if (!seen.has(key)) {
      row.el.remove();
      row.destroy?.();
      rows.delete(key);
    }
  }
  return rows;
}

/** The artwork square: a neutral placeholder with an icon, covered by the image once it loads. */
export function artwork(url, { placeholder = "music", className = "", size = "" } = {}) {
  const box = h("div", { class: ["art", size && `art-${size}`, className], aria: { hidden: "true" } }, icon(placeholder, "art-icon"));
  if (typeof url === "string" && /^https?:\/\//i.test(url)) {
    const img = h("img", { alt: "", loading: "lazy", decoding: "async", referrerpolicy: "no-referrer", src: url });
    img.addEventListener("load", () => box.classList.add("loaded"));
    img.addEventListener("error", () => img.remove());
    box.append(img);
  }
  return box;
}

/** A progress bar (role=progressbar); set(fraction or null for indeterminate). */
export function progressBar(className = "") {
  const fill = h("span", { class: "bar-fill" });
  const el = h("div", { class: ["bar", className], role: "progressbar", "aria-valuemin": "0", "aria-valuemax": "100" }, fill);
  return {
    el,
    set(fraction, label) {
      const known = typeof fraction === "number" && Number.isFinite(fraction);
      el.classList.toggle("indeterminate", !known);
      // CSSOM, not a style attribute: allowed by the page's Content-Security-Policy.
      fill.style.setProperty("--fraction", known ? String(Math.min(1, Math.max(0, fraction))) : "0");
      if (known) el.setAttribute("aria-valuenow", (fraction * 100).toFixed(1));
      else el.removeAttribute("aria-valuenow");
      if (label) el.setAttribute("aria-valuetext", label);
    },
  };
}

/** Calls fn after `ms` of quiet; `.cancel()` stops a pending call, `.flush()` runs it now. */
export function debounce(fn, ms) {
  let timer = null;
  let lastArgs = [];
  const debounced = (...args) => {
    lastArgs = args;
    clearTimeout(timer);
    timer = setTimeout(() => {
      timer = null;
      fn(...lastArgs);
    }, ms);
  };
  debounced.cancel = () => {
    clearTimeout(timer);
    timer = null;
  };
  debounced.flush = () => {
    if (timer !== null) {
      debounced.cancel();
      fn(...lastArgs);
    }
  };
  return debounced;
}
