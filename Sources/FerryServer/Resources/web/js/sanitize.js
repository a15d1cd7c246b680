// An allowlist HTML sanitiser for show notes and podcast descriptions. The daemon already
// sanitises them; this is the page's own second line. The text is parsed by DOMParser into an
// inert document (no scripts run, no images load), and a new fragment is built from it node by
// node: allowed elements with allowed attributes, text as text nodes. Nothing is ever assigned
// to innerHTML.

const ALLOWED = {
  a: ["href", "title"],
  abbr: ["title"],
  b: [],
  blockquote: [],
  br: [],
  code: [],
  em: [],
  i: [],
  li: [],
  ol: [],
  p: [],
  pre: [],
  s: [],
  small: [],
  strong: [],
  sub: [],
  sup: [],
  u: [],
  ul: [],
  hr: [],
};

// Shown as a paragraph or bold text; their own tags could break the page's outline.
const RENAMED = { h1: "p", h2: "p", h3: "p", h4: "p", h5: "p", h6: "p", div: "p", section: "p", article: "p", span: null, font: null, center: "p", header: "p", footer: "p" };

// Dropped with everything inside them.
const DROPPED = new Set(["script", "style", "template", "iframe", "frame", "frameset", "object", "embed", "applet", "noscript", "svg", "math", "form", "input", "button", "textarea", "select", "option", "link", "meta", "base", "title", "head", "audio", "video", "source", "track", "img", "picture", "canvas", "dialog", "portal"]);

const MAX_DEPTH = 24;

function safeHref(value) {
  try {
    const url = new URL(value, "https://invalid.invalid/");
    if (url.origin === "https://invalid.invalid") return null; // relative: no base to resolve against
    return ["http:", "https:", "mailto:"].includes(url.protocol) ? url.href : null;
  } catch {
    return null;
  }
}

function copyChildren(source, target, depth) {
  for (const node of source.childNodes) {
    if (node.nodeType === Node.TEXT_NODE) {
      target.append(document.createTextNode(node.data));
    } else if (node.nodeType === Node.ELEMENT_NODE) {
      copyElement(node, target, depth + 1);
    }
    // Comments, processing instructions and the rest are left out.
  }
}

function copyElement(node, target, depth) {
  const tag = node.localName.toLowerCase();
  if (DROPPED.has(tag) || node.namespaceURI !== "http://www.w3.org/1999/xhtml") return;
  if (depth > MAX_DEPTH) {
    target.append(document.createTextNode(node.textContent || ""));
    return;
  }
  const name = tag in ALLOWED ? tag : RENAMED[tag];
  if (name === undefined || name === null) {
    // Unknown or presentational: keep the content, lose the element.
    copyChildren(node, target, depth);
    return;
  }
  const el = document.createElement(name);
  for (const attribute of ALLOWED[name] || []) {
    const value = node.getAttribute(attribute);
    if (value === null) continue;
    if (attribute === "href") {
      const href = safeHref(value.trim());
      if (!href) continue;
      el.setAttribute("href", href);
      el.setAttribute("rel", "noopener noreferrer nofollow");
      el.setAttribute("target", "_blank");
    } else {
      el.setAttribute(attribute, value.slice(0, 500));
    }
  }
  copyChildren(node, el, depth);
  target.append(el);
}

/** A DocumentFragment of the allowed part of `html`; plain text stays plain text. */
export function sanitizedFragment(html) {
  const fragment = document.createDocumentFragment();
  if (typeof html !== "string" || html === "") return fragment;
  const parsed = new DOMParser().parseFromString(html, "text/html");
  copyChildren(parsed.body, fragment, 0);
  return fragment;
}

