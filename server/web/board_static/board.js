// The handoff board. Every text from the tree is set with textContent, never as markup, and
// characters that hide or reorder text (bidi controls, zero-width marks, control codes, line and
// paragraph separators, fillers that draw nothing, variation selectors, tag characters) are
// spelled out as ⟦U+XXXX⟧ so a person sees them.
"use strict";

const prefix = document.body.dataset.prefix;
const open = new Map(); // change -> number of tasks shown
let selected = null;

const HIDDEN =
  /[\u0000-\u0008\u000B-\u001F\u007F-\u009F\u00AD\u034F\u061C\u115F\u1160\u17B4\u17B5\u180B-\u180F\u200B-\u200F\u2028-\u202E\u2060-\u206F\u3164\uFE00-\uFE0F\uFEFF\uFFA0\uFFF0-\uFFFB\u{E0000}-\u{E007F}\u{E0100}-\u{E01EF}]/gu;

function reveal(text) {
  return String(text ?? "").replace(HIDDEN, (c) => `⟦U+${c.codePointAt(0).toString(16).toUpperCase().padStart(4, "0")}⟧`);
}

function el(tag, attrs = {}, ...children) {
  const node = document.createElement(tag);
  for (const [key, value] of Object.entries(attrs)) {
    if (key === "class") node.className = value;
    else if (key === "text") node.textContent = reveal(value);
    else node.setAttribute(key, value);
  }
  for (const child of children) if (child) node.append(child);
  return node;
}

async function get(path) {
  const response = await fetch(prefix + path, { credentials: "same-origin" });
  if (!response.ok) throw new Error(`${response.status} ${await response.text()}`);
  return response.json();
}

function stateClass(state) {
  return state.startsWith("returned:") ? state.slice(9) : state;
}

function age(seconds) {
  if (seconds === null || seconds === undefined) return "";
  const m = Math.floor(seconds / 60);
  if (m < 1) return `${Math.floor(seconds)}s`;
  if (m < 60) return `${m}m`;
  if (m < 1440) return `${Math.floor(m / 60)}h ${m % 60}m`;
  return `${Math.floor(m / 1440)}d`;
}

function chips(counts) {
  return Object.entries(counts).sort().map(([state, n]) =>
    el("span", { class: "chip" }, el("b", { class: `state ${stateClass(state)}`, text: state }), ` ${n}`));
}

async function renderSummary() {
  const s = await get("/api/summary");
  document.getElementById("root").textContent = `state root ${reveal(s.state_root)} · ${s.total} tasks`;
  const totals = {};
  for (const change of s.changes) for (const [k, v] of Object.entries(change.counts)) totals[k] = (totals[k] || 0) + v;
  const flagged = s.attention ? [el("span", { class: "chip attention", text: `⚠ needs attention ${s.attention}` })] : [];
  document.getElementById("totals").replaceChildren(...chips(totals), ...flagged,
    el("span", { class: "chip", text: s.writers, title: "what create_task admits now" }));
  document.getElementById("claims").replaceChildren(...s.claims.map((c) =>
    el("span", { class: "chip mono", text: `claim ${c.ref} · ${c.claim}` })));
  const list = document.getElementById("changes");
  const kept = new Map([...list.querySelectorAll("details.change")].map((d) => [d.dataset.change, d]));
  const nodes = s.changes.map((change) => {
    const node = kept.get(change.change) || el("details", { class: "change", "data-change": change.change });
    const flagged = change.attention ? el("span", { class: "chip attention",
      text: `⚠ needs attention ${change.attention}`, title: "a failed audit, a proof that is not valid, an unreadable task..." }) : null;
    const summary = el("summary", {}, el("span", { class: "name mono", text: change.change }),
      el("span", { class: "muted", text: `${change.rounds.length} round(s)` }), ...chips(change.counts), flagged);
    const body = node.querySelector(".body") || el("div", { class: "body" });
    node.replaceChildren(summary, body);
    if (!node.dataset.wired) {
      node.dataset.wired = "1";
      node.addEventListener("toggle", () => {
        if (node.open) { open.set(change.change, open.get(change.change) || 200); renderTasks(change.change); }
        else open.delete(change.change);
      });
    }
    return node;
  });
  list.replaceChildren(...(nodes.length ? nodes : [el("p", { class: "muted", text: "no tasks yet" })]));
  for (const change of open.keys()) renderTasks(change);
}

function timeline(rows) {
  const span = Math.max(1, ...rows.map((r) => r.age_seconds));
  const bar = (row) => {
    const bar = el("div", { class: "timeline", title: "dispatch → return" });
    const start = 100 * (1 - row.age_seconds / span);
    const end = row.returned_seconds === null ? 100 : 100 * (1 - row.returned_seconds / span);
    const part = el("span");
    part.style.left = `${start}%`;
    part.style.width = `${Math.max(1.5, end - start)}%`;
    const colour = row.attention ? "failed" : row.returned_seconds === null ? "dispatched" : "returned";
    part.style.background = `var(--${colour})`;
    bar.append(part);
    return bar;
  };
  // The scale over the column: the oldest dispatch of the change on the left, now on the right.
  const scale = el("div", { class: "scale", title: "dispatch → return, oldest dispatch to now" },
    el("span", { text: `${age(span)} ago` }), el("span", { text: age(span / 2) }), el("span", { text: "now" }));
  return { bar, scale };
}

function stateCell(row) {
  // A return whose evidence does not hold (failed audit, proof not valid, ...) is never the plain colour of a good one.
  const flagged = row.attention ? " attention" : "";
  const state = el("span", { class: `state ${stateClass(row.state)}${flagged}`, text: row.state });
  if (row.attention) state.title = reveal(row.attention);
  return el("td", {}, state, row.attention ? el("span", { class: "mark", text: " ⚠" }) : null);
}

function taskRow(row, bar) {
  const tr = el("tr", { class: "task", "data-ref": row.ref, tabindex: "0" },
    el("td", { class: "mono", text: row.ref.split("/")[2] },
      ...(row.link ? [el("div", { class: "link", text: row.link })] : [])),
    el("td", { text: row.kind }),
    stateCell(row),
    el("td", { text: age(row.age_seconds) }),
    el("td", { class: "mono scope", title: row.claim ? `writer claim: ${row.claim}` : "no writer claim" },
      ...[row.workspace, ...row.writable].filter(Boolean).map((part) => el("span", { text: part }))),
    el("td", { class: "when" }, bar(row)),
    el("td", {}, ...row.problems.map((p) => el("div", { class: "problem", text: p }))));
  tr.addEventListener("click", () => showTask(row.ref));
  return tr;
}

async function renderTasks(change) {
  const node = document.querySelector(`details.change[data-change="${CSS.escape(change)}"]`);
  if (!node) return;
  const limit = open.get(change) || 200;
  const pages = [];
  for (let offset = 0; offset < limit; offset += 200) {
    const page = await get(`/api/tasks?change=${encodeURIComponent(change)}&offset=${offset}`);
    pages.push(page);
    if (offset + 200 >= page.total) break;
  }
  const rows = pages.flatMap((p) => p.tasks);
  const total = pages.length ? pages[0].total : 0;
  const rounds = new Map();
  for (const row of rows) {
    const round = row.ref.split("/")[1];
    if (!rounds.has(round)) rounds.set(round, []);
    rounds.get(round).push(row);
  }
  // One table for the change: every round is a body of it, so the rounds share one column grid and one time scale.
  const { bar, scale } = timeline(rows);
  const heads = ["task", "kind", "state", "age", "scope"].map((h) => el("th", { text: h }));
  const table = el("table", { class: "rounds" }, el("thead", {}, el("tr", {}, ...heads,
    el("th", { class: "when" }, "timeline", scale), el("th", { text: "problems" }))));
  for (const [round, members] of rounds) {
    const head = el("tr", { class: "round-head" },
      el("th", { colspan: "7", class: "mono", text: `round ${round} · ${members.length} task(s)` }));
    table.append(el("tbody", { class: "round", "data-round": round }, head, ...members.map((row) => taskRow(row, bar))));
  }
  const sections = [el("div", { class: "scroll" }, table)];
  if (rows.length < total) {
    const more = el("button", { class: "more", type: "button", text: `show more (${rows.length} of ${total})` });
    more.addEventListener("click", () => { open.set(change, limit + 200); renderTasks(change); });
    sections.push(more);
  }
  node.querySelector(".body").replaceChildren(...sections);
}

function textBlock(title, text, untrusted) {
  return el("div", { class: untrusted ? "untrusted" : "" }, el("h4", { text: title }), el("pre", { text }));
}

async function showTask(ref) {
  selected = ref;
  const d = await get(`/api/task?ref=${encodeURIComponent(ref)}`);
  const panel = document.getElementById("detail");
  document.getElementById("detail-ref").textContent = reveal(ref);
  const parts = [];
  if (d.report) {
    parts.push(el("p", { class: "flag", text: "REPORT text is the executor's: shown as text, untrusted." }));
    parts.push(textBlock("聚焦交接 (focused handoff)", d.report.focused, true));
    for (const flag of d.report.flags) parts.push(el("div", { class: "flag", text: flag }));
    const header = Object.entries(d.report.header).map(([k, v]) => `${k}: ${v}`).join("\n");
    parts.push(textBlock("REPORT header", header, true));
    for (const [name, text] of Object.entries(d.report.sections)) {
      parts.push(textBlock(d.meanings[name] ? `${name} (${d.meanings[name]})` : name, text, true));
    }
  } else {
    parts.push(el("p", { class: "muted", text: "no REPORT yet" }));
  }
  const titled = Object.entries(d.meanings).map(([zh, en]) => `${zh} = ${en}`).join(" · ");
  parts.push(textBlock("TASK.md", d.task_text || d.error || "", false));
  parts.push(el("p", { class: "muted", text: `The seed contract's headings: ${titled}` }));
  document.getElementById("detail-body").replaceChildren(...parts);
  panel.hidden = false;
}

document.getElementById("close").addEventListener("click", () => {
  document.getElementById("detail").hidden = true;
  selected = null;
});

function listen() {
  const live = document.getElementById("live");
  const source = new EventSource(prefix + "/events");
  let seen = null;
  source.onopen = () => { live.textContent = "live"; live.classList.add("on"); };
  source.onerror = () => { live.textContent = "reconnecting…"; live.classList.remove("on"); };
  source.onmessage = async (message) => {
    const { version } = JSON.parse(message.data);
    if (version === seen) return;
    seen = version;
    await renderSummary();
    if (selected) await showTask(selected);
    document.body.dataset.version = String(version);
  };
}

renderSummary().then(() => { document.body.dataset.ready = "1"; }).catch((error) => {
  document.getElementById("changes").replaceChildren(el("p", { class: "problem", text: String(error) }));
});
listen();
