// Users (an admin's): add a user with a role; for each, change the password or the role, list
// the sessions and sign them out (one, or everywhere), make and revoke API tokens, remove them.

import { h, button, confirmButton, replace } from "../dom.js";
import { api } from "../api.js";
import { t } from "../i18n.js";
import { dateTime } from "../format.js";
import { clearRequestError, field, select, showRequestError } from "../forms.js";
import { emptyState, errorBox, spinner, toast, withBusy } from "../ui.js";

export function mountUsers(root, _params, ctx) {
  const list = h("ul", { class: "user-list", aria: { label: t("users.list") } });
  const body = h("div", null, spinner());
  replace(
    root,
    h("header", { class: "view-header" }, h("div", null, h("h1", { text: t("nav.users") }), h("p", { class: "view-subtitle", text: t("users.subtitle") }))),
    addForm(() => load()),
    h("section", { aria: { labelledby: "users-heading" } }, h("h2", { class: "visually-hidden", id: "users-heading", text: t("users.list") }), body),
  );
  let live = true;
  const open = new Set(); // the users whose details are unfolded, kept across a reload

  async function load() {
    try {
      const { users } = await api.users.list();
      if (!live) return;
      replace(list, users.map((user) => userRow(user, { me: ctx.me, open, reload: load })));
      replace(body, users.length ? list : emptyState("users", t("users.empty"), t("users.emptyHint")));
    } catch (error) {
      if (live) replace(body, errorBox(error.message, { retry: load }));
    }
  }
  load();
  return {
    unmount() {
      live = false;
    },
  };
}

function addForm(onAdded) {
  const name = field(t("users.name"), h("input", { type: "text", id: "user-add-name", autocomplete: "off", autocapitalize: "none", spellcheck: "false", maxlength: "64", required: true }), { hint: t("users.nameHint") });
  const password = field(t("users.password"), h("input", { type: "password", id: "user-add-password", autocomplete: "new-password", minlength: "8", maxlength: "1024", required: true }), { hint: t("users.passwordHint") });
  const role = field(t("users.role"), select([["member", t("users.role.member")], ["admin", t("users.role.admin")]], "member"));
  const top = h("div", { hidden: true });
  const submit = button(t("users.add"), { type: "submit", kind: "primary", icon: "plus" });
  const form = h("form", { class: "form-section", novalidate: true, aria: { labelledby: "user-add-heading" } },
    h("h2", { id: "user-add-heading", text: t("users.addHeading") }),
    h("p", { class: "section-hint", text: t("users.roleHint") }),
    h("div", { class: "fields" }, name.el, password.el, role.el),
    top,
    h("div", { class: "form-actions" }, submit),
  );
  form.addEventListener("submit", async (event) => {
    event.preventDefault();
    clearRequestError(top);
    if (!name.input.value.trim()) {
      name.showError(t("users.nameMissing"));
      name.input.focus();
      return;
    }
    await withBusy(submit, async () => {
      try {
        const user = await api.users.add(name.input.value.trim(), password.input.value, role.input.value);
        toast(t("users.added", { name: user.name }), { kind: "success" });
        name.input.value = "";
        password.input.value = "";
        onAdded();
      } catch (error) {
        showRequestError(top, error, [[/password/i, password], [/name|exists|already/i, name]]);
      }
    });
  });
  return form;
}

function userRow(user, { me, open, reload }) {
  const self = me?.user === user.name;
  const counts = { sessions: user.sessions, tokens: user.tokens };
  const facts = h("span", { class: "user-facts" });
  const renderFacts = () => {
    facts.textContent = [
      user.role === "admin" ? t("users.role.admin") : t("users.role.member"),
      t("users.sessionCount", { count: counts.sessions }),
      t("users.tokenCount", { count: counts.tokens }),
      t("users.since", { date: dateTime(user.createdAt) }),
    ].join(" · ");
  };
  renderFacts();
  // The lists below say how many there are now: the summary follows them.
  const counted = (kind, count) => {
    counts[kind] = count;
    renderFacts();
  };
  const inner = h("div", { class: "user-body" });
  const details = h("details", { class: "user", data: { user: user.name }, open: open.has(user.name) },
    h("summary", null, h("span", { class: "user-name", text: user.name }), facts),
    inner,
  );
  let filled = false;
  const fill = () => {
    if (filled) return;
    filled = true;
    replace(inner, passwordForm(user), self ? null : roleForm(user, reload), credentials(user, "sessions", counted), credentials(user, "tokens", counted), self ? null : removeUser(user, reload));
  };
  details.addEventListener("toggle", () => {
    if (details.open) {
      open.add(user.name);
      fill();
    } else {
      open.delete(user.name);
    }
  });
  if (details.open) fill();
  return h("li", null, details);
}

function passwordForm(user) {
  const password = field(t("users.newPassword"), h("input", { type: "password", autocomplete: "new-password", minlength: "8", maxlength: "1024" }), { hint: t("users.newPasswordHint") });
  const top = h("div", { hidden: true });
  const submit = button(t("users.setPassword"), { type: "submit", kind: "secondary" });
  const form = h("form", { class: "inline-form", novalidate: true, aria: { label: t("users.passwordOf", { name: user.name }) } }, password.el, submit);
  form.addEventListener("submit", async (event) => {
    event.preventDefault();
    clearRequestError(top);
    await withBusy(submit, async () => {
      try {
        await api.users.update(user.name, { password: password.input.value });
        password.input.value = "";
        toast(t("users.passwordSet", { name: user.name }), { kind: "success" });
      } catch (error) {
        showRequestError(top, error, [[/password/i, password]]);
      }
    });
  });
  return h("div", null, h("h3", { text: t("users.password") }), form, top);
}

function roleForm(user, reload) {
  const other = user.role === "admin" ? "member" : "admin";
  const change = button(other === "admin" ? t("users.makeAdmin") : t("users.makeMember"), {
    kind: "secondary",
    onClick: (event) => withBusy(event.currentTarget, async () => {
      await api.users.update(user.name, { role: other });
      toast(t("users.roleSet", { name: user.name, role: other === "admin" ? t("users.role.admin") : t("users.role.member") }), { kind: "success" });
      reload();
    }),
  });
  return h("div", null, h("h3", { text: t("users.role") }), h("p", { class: "field-hint", text: user.role === "admin" ? t("users.isAdmin") : t("users.isMember") }), h("div", { class: "inline-form" }, change));
}

/**
 * A user's sessions (kind "sessions") or API tokens ("tokens"): listed, ended one by one or all;
 * `counted(kind, count)` after each reading.
 */
function credentials(user, kind, counted) {
  const list = h("ul", { class: "credential-list" });
  const box = h("div", null, spinner());
  const extra = h("div", null);
  const label = (c) => c.label || (kind === "sessions" ? t("users.unknownBrowser") : t("users.unnamedToken"));

  async function load() {
    try {
      const { credentials: items } = await api.users.credentials(user.name, kind);
      replace(list, items.map((c) => h("li", { class: "credential", data: { id: c.id } },
        h("div", { class: "credential-text" },
          h("span", { text: label(c) + (c.current ? ` (${t("users.thisSession")})` : "") }),
          h("small", { text: [t("users.created", { date: dateTime(c.createdAt) }), c.lastUsedAt ? t("users.lastUsed", { date: dateTime(c.lastUsedAt) }) : null, c.address].filter(Boolean).join(" · ") })),
        confirmButton(kind === "sessions" ? t("users.signOutOne", { label: label(c) }) : t("users.revokeOne", { label: label(c) }), {
          icon: "x",
          question: kind === "sessions" ? t("users.signOutQuestion") : t("users.revokeQuestion"),
          confirmLabel: kind === "sessions" ? t("users.signOutConfirm", { label: label(c) }) : t("users.revokeConfirm", { label: label(c) }),
          onConfirm: async () => {
            try {
              await api.users.end(user.name, kind, c.id);
              toast(kind === "sessions" ? t("users.signedOut") : t("users.revoked"), { kind: "success" });
              load();
            } catch (error) {
              toast(error.message, { kind: "error" });
            }
          },
        }),
      )));
      replace(box, items.length ? list : h("p", { class: "field-hint", text: kind === "sessions" ? t("users.noSessions") : t("users.noTokens") }));
      counted(kind, items.length);
    } catch (error) {
      replace(box, errorBox(error.message, { retry: load }));
    }
  }
  load();

  const actions = h("div", { class: "inline-form" });
  if (kind === "sessions") {
    actions.append(button(t("users.signOutEverywhere"), {
      kind: "secondary",
      icon: "logout",
      onClick: (event) => withBusy(event.currentTarget, async () => {
        await api.users.end(user.name, "sessions");
        toast(t("users.signedOutEverywhere", { name: user.name }), { kind: "success" });
        load();
      }),
    }));
  } else {
    const tokenLabel = field(t("users.tokenLabel"), h("input", { type: "text", maxlength: "100", placeholder: t("users.tokenLabelPlaceholder") }));
    const make = button(t("users.makeToken"), { type: "submit", kind: "secondary", icon: "plus" });
    const form = h("form", { class: "inline-form", novalidate: true }, tokenLabel.el, make);
    form.addEventListener("submit", async (event) => {
      event.preventDefault();
      await withBusy(make, async () => {
        const created = await api.users.makeToken(user.name, tokenLabel.input.value.trim() || undefined);
        tokenLabel.input.value = "";
        // Shown once: the daemon keeps only its digest.
        replace(extra, h("p", { class: "field-hint", text: t("users.tokenOnce") }), h("p", { class: "new-token", role: "status" }, h("code", { class: "token-value", text: created.token })));
        load();
      });
    });
    actions.append(form);
  }
  return h("div", null, h("h3", { text: kind === "sessions" ? t("users.sessions") : t("users.tokens") }), box, actions, extra);
}

function removeUser(user, reload) {
  return h("div", { class: "inline-form" }, confirmButton(t("users.remove", { name: user.name }), {
    question: t("users.removeQuestion"),
    confirmLabel: t("users.removeConfirm", { name: user.name }),
    onConfirm: async () => {
      try {
        await api.users.remove(user.name);
        toast(t("users.removed", { name: user.name }), { kind: "success" });
        reload();
      } catch (error) {
        toast(error.message, { kind: "error" });
      }
    },
  }));
}
