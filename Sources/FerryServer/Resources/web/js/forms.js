// Form pieces the Settings and Users pages and the New download dialog share: a labelled field
// with its hint and its own error, a rate in KB/s or MB/s, and the daemon's error placed next to
// the field it names (and always at the top of the form).

import { h, replace } from "./dom.js";
import { t } from "./i18n.js";
import { errorBox } from "./ui.js";

let counter = 0;

/**
 * A labelled field: field(label, input, {hint, wide}) → {el, input, showError(text), clearError()}.
 * The input gets an id, and is described by its hint and its error.
 */
export function field(label, input, { hint = "", wide = false } = {}) {
  counter += 1;
  const id = input.id || `field-${counter}`;
  const control = input.matches("input, select, textarea") ? input : input.querySelector("input, select, textarea");
  if (control && !control.id) control.id = id;
  const hintEl = hint ? h("p", { class: "field-hint", id: `${control?.id ?? id}-hint`, text: hint }) : null;
  const error = h("p", { class: "field-error", id: `${control?.id ?? id}-error`, role: "alert", hidden: true });
  if (control) control.setAttribute("aria-describedby", [hintEl?.id, error.id].filter(Boolean).join(" "));
  const el = h("div", { class: ["field", wide && "field-wide"] }, h("label", { for: control?.id ?? id, text: label }), input, hintEl, error);
  const clearError = () => {
    error.hidden = true;
    error.textContent = "";
    control?.removeAttribute("aria-invalid");
  };
  control?.addEventListener("input", clearError);
  return {
    el,
    input: control,
    showError(text) {
      error.textContent = text;
      error.hidden = false;
      control?.setAttribute("aria-invalid", "true");
    },
    clearError,
  };
}

/** A checkbox with its label: → {el, input}. */
export function check(label, { checked = false, id } = {}) {
  const input = h("input", { type: "checkbox", checked, id });
  return { el: h("label", { class: "check" }, input, h("span", { text: label })), input };
}

/** <select> of [value, label] pairs. */
export function select(options, value) {
  return h("select", null, options.map(([v, label]) => h("option", { value: v, selected: v === value, text: label })));
}

const UNITS = [
  ["1024", () => t("form.unit.kBps")],
  ["1048576", () => t("form.unit.MBps")],
];

/** A bandwidth in KB/s or MB/s (1024s); empty: none. → {el, input, get() → bytes or null, set(bytes)}. */
export function rateInput(id) {
  const number = h("input", { type: "number", id, min: "1", step: "any", inputmode: "decimal", placeholder: t("form.noLimit") });
  const unit = select(UNITS.map(([v, label]) => [v, label()]), "1048576");
  unit.setAttribute("aria-label", t("form.unit.label"));
  return {
    el: h("div", { class: "input-group" }, number, unit),
    input: number,
    get() {
      const value = Number(number.value);
      if (number.value.trim() === "" || !Number.isFinite(value)) return null;
      return Math.round(value * Number(unit.value));
    },
    set(bytes) {
      if (!bytes) {
        number.value = "";
        return;
      }
      const big = bytes >= 1048576;
      unit.value = big ? "1048576" : "1024";
      number.value = String(Number((bytes / (big ? 1048576 : 1024)).toFixed(2)));
    },
  };
}

/** A whole number, or null when the field is empty. NaN when it is not a number. */
export function integerOf(input) {
  const text = input.value.trim();
  if (!text) return null;
  const value = Number(text);
  return Number.isInteger(value) ? value : NaN;
}

/**
 * Shows a failed request: the daemon's sentence at the top (`top`, an element that holds an
 * error box) and next to the field whose name or words it mentions (`fields`: [[regex, field]]).
 */
export function showRequestError(top, error, fields = []) {
  const message = error?.message || String(error);
  replace(top, errorBox(message));
  top.hidden = false;
  const match = fields.find(([pattern]) => pattern.test(message));
  if (match) {
    match[1].showError(message);
    match[1].input?.focus();
  } else {
    top.querySelector(".error-box")?.scrollIntoView?.({ block: "nearest" });
  }
}

/** Empties the top error of a form. */
export function clearRequestError(top) {
  replace(top);
  top.hidden = true;
}
