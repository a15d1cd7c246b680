// What a Podcasting 2.0 feed says about its show (podcast.podcasting): its medium (music, video,
// an audiobook), whether its publisher locked it, when it publishes, where to support it, who
// makes it, its trailers and notes (podcast:txt), its license, and the shows it recommends (each one subscribed with a tap). Every text
// and link here comes from the feed: texts are set as text, links only when http(s), and open
// without a referrer.

import { h, button } from "../dom.js";
import { api } from "../api.js";
import { t as tr } from "../i18n.js";
import { toast, withBusy } from "../ui.js";
import { host } from "../format.js";

const MEDIUMS = ["music", "video", "film", "audiobook", "newsletter", "blog", "publisher", "course"];

function webLink(url, text) {
  if (!/^https?:\/\//i.test(url || "")) return h("span", { text });
  return h("a", { href: url, text, target: "_blank", rel: "noopener noreferrer nofollow external" });
}

/** People by role: "Hosted by Ann, Bo · With Cy" (a person without a role hosts, as the spec says). */
export function people(persons) {
  const byRole = new Map();
  for (const person of persons) {
    const role = person.role || "host";
    if (!byRole.has(role)) byRole.set(role, []);
    byRole.get(role).push(person.name);
  }
  return [...byRole].map(([role, names]) => {
    const list = names.join(", ");
    if (role === "host") return tr("podcast.about.hosts", { names: list });
    if (role === "guest") return tr("podcast.about.guests", { names: list });
    return `${role}: ${list}`;
  }).join(" · ");
}

/** The "about" block of a podcast's page, or null when its feed says nothing of the kind. */
export function podcastAbout(podcast, ctx) {
  const about = podcast.podcasting;
  if (!about) return null;
  const badges = [];
  if (about.medium && about.medium !== "podcast") {
    badges.push(h("span", { class: "badge", data: { medium: about.medium }, text: MEDIUMS.includes(about.medium) ? tr(`podcast.about.medium.${about.medium}`) : about.medium }));
  }
  if (about.locked) badges.push(h("span", { class: "badge", title: tr("podcast.about.lockedHint"), text: tr("podcast.about.locked") }));
  const lines = [];
  const frequency = about.updateFrequency;
  if (frequency?.complete) lines.push(h("p", { text: tr("podcast.about.complete") }));
  else if (frequency?.text) lines.push(h("p", { text: tr("podcast.about.publishes", { when: frequency.text }) }));
  if (about.persons?.length) lines.push(h("p", { class: "podcast-people", text: people(about.persons) }));
  if (about.funding?.length) {
    lines.push(h("p", { class: "podcast-funding" }, h("span", { text: `${tr("podcast.about.support")} ` }),
      ...about.funding.flatMap((f, i) => [i ? ", " : null, webLink(f.url, f.text || host(f.url))])));
  }
  // Trailers play at their host (a new tab): they are not episodes of the library.
  const trailers = (about.trailers || []).filter((trailer) => /^https?:\/\//i.test(trailer.url || "")).slice(0, 10);
  if (trailers.length) {
    lines.push(h("p", { class: "podcast-trailers" }, h("span", { text: `${tr("podcast.about.trailers")} ` }),
      ...trailers.flatMap((trailer, i) => [i ? ", " : null,
        webLink(trailer.url, trailer.season ? tr("podcast.about.trailerOfSeason", { title: trailer.title || host(trailer.url), season: trailer.season }) : trailer.title || host(trailer.url))])));
  }
  // podcast:txt: free text the publisher attaches (a verification code, a note), each with its purpose.
  for (const note of (about.txt || []).slice(0, 5)) {
    lines.push(h("p", { class: "podcast-txt" }, note.purpose ? h("span", { class: "podcast-txt-purpose", text: `${note.purpose}: ` }) : null, h("span", { text: note.text })));
  }
  if (about.license) lines.push(h("p", {}, h("span", { text: `${tr("podcast.about.license")} ` }), about.license.url ? webLink(about.license.url, about.license.name) : h("span", { text: about.license.name })));
  const recommended = (about.podroll || []).filter((item) => /^https?:\/\//i.test(item.feedURL || ""));
  let podroll = null;
  if (recommended.length) {
    podroll = h("div", { class: "podroll" }, h("h2", { class: "podroll-title", text: tr("podcast.about.recommended") }),
      h("ul", { class: "podroll-list" }, recommended.slice(0, 20).map((item) => {
        const subscribe = button(tr("podcasts.subscribe"), {
          icon: "plus",
          kind: "secondary",
          onClick: async () => {
            const detail = await withBusy(subscribe, () => api.podcasts.subscribe({ url: item.feedURL }), tr("podcasts.subscribing"));
            if (detail) {
              toast(tr("podcasts.subscribed", { title: detail.podcast.title }), { kind: "success" });
              ctx.navigate(`#/podcasts/${detail.podcast.id}`);
            }
          },
        });
        return h("li", { class: "podroll-item" }, h("span", { class: "podroll-host", text: host(item.feedURL) }), subscribe);
      })));
  }
  if (!badges.length && !lines.length && !podroll) return null;
  return h("section", { class: "podcast-about", aria: { label: tr("podcast.about") } },
    badges.length ? h("p", { class: "podcast-badges" }, badges) : null, lines, podroll);
}
