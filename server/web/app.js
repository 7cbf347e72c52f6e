// Kairos web page: search and chat over the public HTTP API (see /openapi.json). No build
// step, no dependencies. Every call goes through api(), which adds the API key when the
// server asked for one.
"use strict";

const $ = (id) => document.getElementById(id);
const KEY = "kairos-api-key";
// SESSION keeps the token that owns this tab's conversations on a server without API keys
// (POST /v1/chat returns it with the first conversation; the cookie it also sets is the
// fallback).
const SESSION = "kairos-session";
let stats = null;
let conversation = "";

// el builds an element; text children become text nodes, never HTML.
function el(tag, attrs, ...kids) {
  const e = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs || {})) {
    if (v === undefined || v === null || v === false) continue;
    if (k === "class") e.className = v; else e.setAttribute(k, v);
  }
  for (const k of kids.flat()) if (k !== undefined && k !== null) e.append(k);
  return e;
}

// safeHref is u when it is an absolute http(s) URL, else null: the server sends no other, and
// the page makes no link of one whatever it is sent (a javascript: URL is a script).
function safeHref(u) {
  if (typeof u !== "string" || !/^https?:\/\//i.test(u)) return null;
  try {
    const p = new URL(u);
    return p.protocol === "http:" || p.protocol === "https:" ? p.href : null;
  } catch (_) {
    return null;
  }
}

class APIError extends Error {
  constructor(status, msg) { super(msg); this.status = status; }
}

// api calls the server; a JSON error body becomes an APIError carrying its message.
async function api(method, path, body) {
  const headers = {};
  const key = sessionStorage.getItem(KEY);
  if (key) headers["Authorization"] = "Bearer " + key;
  const session = sessionStorage.getItem(SESSION);
  if (session && path.startsWith("/v1/chat")) headers["X-Kairos-Session"] = session;
  if (body !== undefined) headers["Content-Type"] = "application/json";
  const resp = await fetch(path, { method, headers, body: body === undefined ? undefined : JSON.stringify(body) });
  if (resp.status === 401) askKey();
  if (!resp.ok) {
    let msg = resp.status + " " + resp.statusText;
    try { const e = await resp.json(); if (e.error) msg = resp.status + ": " + e.error; } catch (_) { /* not JSON */ }
    throw new APIError(resp.status, msg);
  }
  return resp;
}

function showError(err) {
  const box = $("error");
  if (!err) { box.hidden = true; box.textContent = ""; return; }
  box.textContent = err instanceof APIError ? "API error " + err.message : String(err);
  box.hidden = false;
}

function askKey() {
  $("key-form").hidden = false;
  $("api-key").focus();
}

// ---- index facts --------------------------------------------------------------------------

function bytes(n) {
  const u = ["B", "KiB", "MiB", "GiB", "TiB"];
  let i = 0;
  while (n >= 1024 && i < u.length - 1) { n /= 1024; i++; }
  return n.toFixed(i ? 1 : 0) + " " + u[i];
}

const day = (s) => (s ? s.slice(0, 10) : "");

async function loadStats() {
  stats = await (await api("GET", "/v1/stats")).json();
  const ix = stats.index, sv = stats.server;
  const facts = [
    ["Passages", ix.passages.toLocaleString("en")],
    ["Documents", ix.documents.toLocaleString("en")],
    ["Size", bytes(ix.size_bytes)],
    ["Model", ix.model || "none (BM25 only)"],
    ["Default mode", ix.default_mode],
    ["Generation", String(sv.generation)],
    ["Built", day(ix.created)],
  ];
  if (ix.date_from) facts.push(["Dates", day(ix.date_from) + " – " + day(ix.date_to)]);
  facts.push(["Server", sv.version]);
  $("facts").replaceChildren(...facts.map(([k, v]) => el("div", {}, el("dt", {}, k), el("dd", {}, v))));
  // Offer a language filter when the index holds several (its analyzer is "multilingual").
  const langs = Object.keys(ix.languages || {}).sort();
  $("language-field").hidden = langs.length < 2;
  $("language").replaceChildren(el("option", { value: "" }, "any"),
    ...langs.map((l) => el("option", { value: l }, l + " (" + ix.languages[l].toLocaleString("en") + ")")));
  const asked = new URLSearchParams(location.search).get("language");
  if (asked) $("language").value = asked;
  // Offer only the modes the index can serve.
  for (const o of $("mode").options) {
    if (o.value === "dense" || o.value === "hybrid") o.disabled = o.hidden = !ix.dense;
  }
  drawOverview(ix);
  const chat = sv.chat;
  $("chat-off").hidden = !!chat;
  $("chat-on").hidden = !chat;
  if (chat) {
    const names = chat.pipelines.length ? chat.pipelines : [""];
    $("pipeline").replaceChildren(...names.map((n, i) => el("option", { value: n }, (n || "default") + (i === 0 ? " (default)" : ""))));
  }
}

// drawOverview charts what the index holds: passages per source and per language as bars
// (the largest first, the rest summed as "other"), and the passages' date range on a time
// axis, so a newcomer sees which --source and --language values exist and which dates a
// filter can reach.
function drawOverview(ix) {
  const total = ix.passages || 0;
  const panels = [
    barPanel("Sources", "--source", ix.sources || {}, total),
    barPanel("Languages", "--language", ix.languages || (ix.language ? { [ix.language]: total } : {}), total),
    datePanel(ix),
  ];
  $("overview-chart").replaceChildren(...panels);
  $("overview").hidden = total === 0;
}

const MAX_BARS = 6;

function barPanel(title, flag, counts, total) {
  let rows = Object.entries(counts).sort((a, b) => b[1] - a[1] || (a[0] < b[0] ? -1 : 1));
  if (rows.length > MAX_BARS) {
    const rest = rows.slice(MAX_BARS - 1).reduce((n, r) => n + r[1], 0);
    rows = rows.slice(0, MAX_BARS - 1).concat([["other (" + (Object.keys(counts).length - MAX_BARS + 1) + ")", rest]]);
  }
  const top = rows.length ? rows[0][1] : 1;
  return el("div", { class: "panel", "data-panel": title.toLowerCase() },
    el("h3", {}, title, " ", el("span", { class: "flag" }, flag)),
    el("ul", { class: "bars" }, ...rows.map(([name, n]) => el("li", {},
      el("span", { class: "name", title: name }, name),
      el("span", { class: "track", "aria-hidden": "true" }, styled(el("span", { class: "bar" }), { width: Math.max(1, 100 * n / top).toFixed(1) + "%" })),
      el("span", { class: "count" }, n.toLocaleString("en") + (total ? " · " + pct(n, total) : ""))))));
}

function pct(n, total) {
  const p = 100 * n / total;
  if (p > 0 && p < 0.1) return "<0.1%";
  if (p > 99 && p < 100) return p.toFixed(1) + "%"; // not "100%" while another is there
  return (p >= 10 || p === 0 ? p.toFixed(0) : p.toFixed(1)) + "%";
}

// styled sets e's inline style through the CSSOM: the server's Content-Security-Policy
// refuses style attributes, not this.
function styled(e, props) {
  Object.assign(e.style, props);
  return e;
}

// datePanel draws the range on an axis from the decade before its start to the current
// year, with a tick per decade (per 50 years on long axes).
function datePanel(ix) {
  const panel = el("div", { class: "panel", "data-panel": "dates" }, el("h3", {}, "Dates ", el("span", { class: "flag" }, "--date-from, --date-to")));
  if (!ix.date_from) {
    panel.append(el("p", { class: "hint" }, "No passage carries a date: date filters and the time need find nothing to use."));
    return panel;
  }
  const from = new Date(ix.date_from), to = new Date(ix.date_to);
  const year = (d) => d.getUTCFullYear() + d.getUTCMonth() / 12;
  const now = new Date().getUTCFullYear() + 1;
  const lo = Math.floor(year(from) / 10) * 10 - (year(from) % 10 < 1 ? 10 : 0);
  const hi = Math.max(now, Math.ceil(year(to) + 1));
  const x = (y) => (100 * (y - lo) / (hi - lo)).toFixed(2) + "%";
  const step = hi - lo > 120 ? 50 : hi - lo > 40 ? 20 : 10;
  const ticks = [];
  for (let t = Math.ceil(lo / step) * step; t < hi; t += step) {
    ticks.push(styled(el("span", { class: "tick" }, String(t)), { left: x(t) }));
  }
  const span = styled(el("span", { class: "range" }), { left: x(year(from)), width: "calc(" + x(year(to) + 1 / 12) + " - " + x(year(from)) + ")" });
  panel.append(
    el("div", { class: "axis", role: "img", "aria-label": "passages dated " + day(ix.date_from) + " to " + day(ix.date_to) }, span, ...ticks),
    el("p", { class: "range-text" }, day(ix.date_from) + " – " + day(ix.date_to)));
  return panel;
}

// ---- search -------------------------------------------------------------------------------

const fields = ["q", "mode", "time", "year", "from", "to", "rerank", "k", "date_from", "date_to", "language", "block_type"];

function readForm() {
  const p = {};
  for (const f of fields) p[f] = $(f).value.trim();
  return p;
}

function fillForm(params) {
  for (const f of fields) if (params.has(f)) $(f).value = params.get(f);
  timeFields();
}

function timeFields() {
  const t = $("time").value;
  document.body.classList.toggle("time-year", t === "year");
  document.body.classList.toggle("time-range", t === "range");
}

// request builds the POST /v1/search body from the page's settings, as the server's
// PageQuery does for a page URL.
function request(p) {
  const q = { text: p.q, explain: true };
  if (p.k) q.k = Number(p.k);
  if (p.mode) q.mode = p.mode;
  if (p.time === "year") q.time = p.year;
  else if (p.time === "range") q.time = p.from + ".." + p.to;
  else if (p.time) q.time = p.time;
  // A time need acts only through the time stage, so it is added when a need is set.
  const stages = p.rerank ? p.rerank.split(",") : [];
  if (q.time && q.time !== "none" && !stages.includes("time")) stages.push("time");
  if (stages.length) q.rerank = stages.join(",");
  if (p.date_from || p.date_to || p.language || p.block_type) {
    q.filters = {};
    if (p.date_from) q.filters.date_from = p.date_from;
    if (p.date_to) q.filters.date_to = p.date_to;
    if (p.language) q.filters.language = p.language;
    if (p.block_type) q.filters.block_type = p.block_type;
  }
  return q;
}

function pageURL(p) {
  const u = new URLSearchParams();
  for (const f of fields) {
    const v = p[f];
    if (!v || (f === "time" && v === "none") || (f === "k" && v === "10")) continue;
    if ((f === "year" && p.time !== "year") || ((f === "from" || f === "to") && p.time !== "range")) continue;
    u.set(f, v);
  }
  return "/?" + u.toString();
}

// stopwords are not highlighted: marking every "and" hides the words that matched.
const stopwords = new Set("a an and are as at be by did do does for from had has have how in is it its of on or that the this to was were what when where which who whom why with".split(" "));

// terms are the query's words, for highlighting.
function terms(q) {
  return [...new Set(q.toLowerCase().split(/[^\p{L}\p{N}]+/u).filter((w) => w.length > 1 && !stopwords.has(w)))];
}

function highlight(text, words) {
  if (!words.length) return [text];
  const esc = words.map((w) => w.replace(/[.*+?^${}()|[\]\\]/g, "\\$&"));
  const re = new RegExp("(?<![\\p{L}\\p{N}])(" + esc.join("|") + ")(?![\\p{L}\\p{N}])", "giu");
  const out = [];
  let last = 0;
  for (const m of text.matchAll(re)) {
    if (m.index > last) out.push(text.slice(last, m.index));
    out.push(el("mark", {}, m[0]));
    last = m.index + m[0].length;
  }
  out.push(text.slice(last));
  return out;
}

const num = (v) => (v === undefined || v === null ? "–" : Number(v).toFixed(4));

function explainTable(h, mode) {
  const x = h.explain || {};
  const s = h.scores || {};
  const rows = [
    // In bm25 mode the retrieval score is the BM25 score; hybrid reports both parts.
    ["BM25", s.bm25 !== undefined ? s.bm25 : (mode === "bm25" ? x.retrieval : undefined)],
    ["Dense (cosine)", s.dense],
    ["Retrieval (fusion in hybrid)", x.retrieval],
    ["Relevance (normalised)", x.relevance],
    ["Cross-encoder", x.cross],
    ["Time", x.time],
    ["Final", x.final],
  ];
  return el("details", { class: "explain" },
    el("summary", {}, "Explain score"),
    el("table", {},
      el("caption", { class: "sr-only" }, "Score breakdown of " + h.title),
      el("tbody", {}, rows.map(([k, v]) => el("tr", {}, el("th", { scope: "row" }, k), el("td", { class: "num" }, num(v)))))),
    x.unscored ? el("p", { class: "notes" }, "The cross-encoder did not reach this passage within its latency budget.") : null,
    (x.notes || []).length ? el("ul", { class: "notes" }, x.notes.map((n) => el("li", {}, n))) : null);
}

function yearLabel(y) { return y.from === y.to ? String(y.from) : y.from + "–" + y.to; }

// loadYears fills in the years a passage mentions, from GET /v1/passages/{id}.
async function loadYears(h, box) {
  try {
    const p = await (await api("GET", "/v1/passages/" + encodeURIComponent(h.passage_id))).json();
    const ys = [...new Set((p.years || []).map(yearLabel))];
    box.replaceChildren(ys.length ? "Years mentioned: " : "No years mentioned", ...ys.map((y) => el("span", {}, y)));
  } catch (err) {
    box.textContent = "Years unavailable: " + err.message;
  }
}

function renderHits(res, words) {
  const list = el("ol", { class: "hits live" }); // "live": rendered from the API, not by the server
  for (const h of res.hits) {
    const href = safeHref(h.url);
    const title = href ? el("a", { href, rel: "noopener" }, h.title) : h.title;
    const years = el("p", { class: "years" }, "Years mentioned: …");
    list.append(el("li", { class: "hit", "data-passage": h.passage_id },
      el("h3", { class: "title" }, el("span", { class: "rank" }, h.rank + "."), title),
      el("p", { class: "meta" },
        h.section ? el("span", { class: "section" }, h.section) : null,
        h.date ? el("span", { class: "date" }, day(h.date)) : null,
        el("span", { class: "score" }, "score " + num(h.score)),
        el("span", { class: "pid" }, h.passage_id)),
      el("p", { class: "snippet" }, highlight(h.text, words)),
      years,
      explainTable(h, res.mode)));
    loadYears(h, years);
  }
  return list;
}

function timeLabel(t) {
  if (!t || t.kind === "none") return "none";
  if (t.kind === "range") return t.from === t.to ? String(t.from) : t.from + "–" + t.to;
  return t.kind;
}

let searchSeq = 0;

async function runSearch(push) {
  const p = readForm();
  if (!p.q) return;
  const url = pageURL(p);
  if (push) history.pushState(null, "", url); else history.replaceState(null, "", url);
  document.title = p.q + " · Kairos";
  const seq = ++searchSeq;
  const box = $("results");
  box.setAttribute("aria-busy", "true");
  $("summary").textContent = "Searching…";
  try {
    const out = await (await api("POST", "/v1/search", request(p))).json();
    if (seq !== searchSeq) return;
    const res = out.results[0];
    showError(null);
    $("summary").textContent = res.hits.length + " results in " + out.took_ms.toFixed(1) + " ms · mode " + res.mode +
      " · time need " + timeLabel(res.time) + " · rerank " + (res.rerank.length ? res.rerank.join(", ") : "none");
    box.replaceChildren(res.hits.length ? renderHits(res, terms(p.q)) : el("p", {}, "No passage matches."));
  } catch (err) {
    if (seq !== searchSeq) return;
    $("summary").textContent = "";
    box.replaceChildren(el("p", { class: "error", role: "alert" }, err instanceof APIError ? "API error " + err.message : String(err)));
  } finally {
    if (seq === searchSeq) box.setAttribute("aria-busy", "false");
  }
}

// ---- chat ---------------------------------------------------------------------------------

// sse reads a text/event-stream body, calling on(event, data) for each event.
async function sse(resp, on) {
  const reader = resp.body.getReader();
  const dec = new TextDecoder();
  let buf = "";
  for (;;) {
    const { value, done } = await reader.read();
    if (done) break;
    buf += dec.decode(value, { stream: true });
    let i;
    while ((i = buf.indexOf("\n\n")) >= 0) {
      const block = buf.slice(0, i);
      buf = buf.slice(i + 2);
      let event = "message", data = "";
      for (const line of block.split("\n")) {
        if (line.startsWith("event: ")) event = line.slice(7);
        else if (line.startsWith("data: ")) data += line.slice(6);
      }
      on(event, JSON.parse(data));
    }
  }
}

function renderTrace(trace) {
  // A server sends the trace only with --chat-trace: without it the panel stays hidden.
  $("trace").hidden = !trace;
  if (!trace) return;
  // The API lists stages as they finish; parallel stages read better by start.
  const stages = [...(trace || [])].sort((a, b) => a.start_ms - b.start_ms);
  $("trace-body").replaceChildren(...stages.map((st) => el("tr", {},
    el("th", { scope: "row" }, st.stage),
    el("td", { class: "num" }, st.start_ms.toFixed(1)),
    el("td", { class: "num" }, st.duration_ms.toFixed(1)),
    el("td", { class: "num" }, st.llm_ms.toFixed(1)),
    el("td", { class: "num" }, String(st.calls)),
    el("td", {}, el("pre", {}, JSON.stringify(st.output === undefined ? null : st.output, null, 1)),
      (st.errors || []).length ? el("p", { class: "notes" }, "skipped: " + st.errors.join("; ")) : null))));
}

// citation shows a cited passage (numbered as the reply's [n] marker that cites it, with its
// section, source link and the verified facts the reply drew from it); its text is fetched
// from GET /v1/passages/{id} when opened.
function citation(c, anchor) {
  const body = el("p", { class: "passage" }, "Loading…");
  const d = el("details", {}, el("summary", {}, c.title, c.section ? " § " + c.section : null, " ",
    el("span", { class: "pid" }, c.passage_id)),
    safeHref(c.url) ? el("a", { href: safeHref(c.url), rel: "noopener", class: "source" }, c.url) : null,
    (c.facts || []).length ? el("ul", { class: "facts" }, c.facts.map((f) => el("li", {}, f))) : null,
    body);
  d.addEventListener("toggle", async () => {
    if (!d.open || d.dataset.loaded) return;
    d.dataset.loaded = "1";
    try {
      const p = await (await api("GET", "/v1/passages/" + encodeURIComponent(c.passage_id))).json();
      const href = safeHref(p.url);
      body.replaceChildren(p.text, ...(href ? [" ", el("a", { href, rel: "noopener" }, "source")] : []));
    } catch (err) {
      body.textContent = err instanceof APIError ? "API error " + err.message : String(err);
    }
  });
  return el("li", { value: c.n || undefined, id: c.n ? anchor + "-" + c.n : undefined }, d);
}

// renderReply shows a reply with each [n] marker that a citation carries as a link to it.
function renderReply(span, text, cites, anchor) {
  const known = new Set(cites.filter((c) => c.n).map((c) => c.n));
  const parts = [];
  let last = 0;
  for (const m of text.matchAll(/\[(\d+(?:, \d+)*)\]/g)) {
    const nums = m[1].split(", ").map(Number);
    if (!nums.every((n) => known.has(n))) continue;
    parts.push(text.slice(last, m.index), el("sup", { class: "cite" }, "[",
      nums.flatMap((n, i) => [i ? ", " : null, el("a", { href: "#" + anchor + "-" + n }, String(n))]), "]"));
    last = m.index + m[0].length;
  }
  parts.push(text.slice(last));
  span.replaceChildren(...parts);
}

// markGrounding says whether the reply was checked against its sources: an ungrounded
// pipeline's reply (mpc, msdp, sicl answer from the model, a memory or examples) is marked as
// such, so that it never reads like a checked one.
function markGrounding(bot, data) {
  bot.dataset.grounded = String(data.grounded === true);
  const note = data.grounded === true
    ? el("p", { class: "grounding checked" }, "Checked: every sentence is supported by the cited passages.")
    : el("p", { class: "grounding unchecked", role: "note" }, "Not checked against sources: the " + (data.pipeline || "chosen") +
      " pipeline answers from the model, its memory or examples, and nothing verified this reply.");
  bot.classList.toggle("ungrounded", data.grounded !== true);
  bot.querySelector(".who").after(note);
}

async function sendChat() {
  const msg = $("message").value.trim();
  if (!msg) return;
  const log = $("chat-log");
  log.append(el("li", { class: "user" }, el("span", { class: "who" }, "You"), msg));
  const reply = el("span", { class: "reply" });
  const bot = el("li", { class: "bot", "aria-busy": "true" }, el("span", { class: "who" }, "Kairos (" + ($("pipeline").value || "default") + ")"), reply);
  log.append(bot);
  $("message").value = "";
  $("chat-send").disabled = true;
  const body = { message: msg, stream: true };
  if (conversation) body.conversation_id = conversation;
  if ($("pipeline").value) body.pipeline = $("pipeline").value;
  try {
    const resp = await api("POST", "/v1/chat", body);
    await sse(resp, (event, data) => {
      if (event === "token") {
        reply.textContent += data.token;
        bot.dataset.tokens = String(Number(bot.dataset.tokens || 0) + 1); // streamed pieces, for tests
      }
      else if (event === "error") throw new APIError(data.status || 0, (data.status ? data.status + ": " : "") + data.error);
      else if (event === "done") {
        conversation = data.conversation_id; // generated by the server, owned by this session
        if (data.session_token) sessionStorage.setItem(SESSION, data.session_token);
        const seen = new Set();
        const cites = data.citations.filter((c) => !seen.has(c.passage_id) && seen.add(c.passage_id));
        const anchor = "cites-" + log.children.length;
        renderReply(reply, data.reply, cites, anchor);
        markGrounding(bot, data);
        if (cites.length) {
          const numbered = cites.some((c) => c.n);
          bot.append(el("p", { class: "cite-head", id: anchor }, numbered ? "Sources" : "Passages this answer was built from"),
            el("ol", { class: "citations", "aria-labelledby": anchor }, cites.map((c) => citation(c, anchor))));
        }
        renderTrace(data.trace);
      }
    });
  } catch (err) {
    // 404: the conversation expired or was evicted; the next message starts a new one.
    if (err instanceof APIError && err.status === 404) conversation = "";
    bot.append(el("p", { class: "error", role: "alert" }, err instanceof APIError ? "API error " + err.message : String(err)));
  } finally {
    bot.setAttribute("aria-busy", "false");
    $("chat-send").disabled = false;
    $("message").focus();
  }
}

// ---- wiring -------------------------------------------------------------------------------

function showTab(name) {
  for (const t of ["search", "chat"]) {
    $("tab-" + t).setAttribute("aria-selected", String(t === name));
    $("tab-" + t).tabIndex = t === name ? 0 : -1;
    $(t + "-view").hidden = t !== name;
  }
}

async function start() {
  document.body.classList.add("js");
  const params = new URLSearchParams(location.search);
  fillForm(params);
  $("time").addEventListener("change", timeFields);
  $("search-form").addEventListener("submit", (e) => { e.preventDefault(); runSearch(true); });
  // Settings apply at once, except a year or range that has yet to be typed in.
  for (const id of ["mode", "time", "rerank", "language", "block_type"]) $(id).addEventListener("change", () => {
    const t = $("time").value;
    if (id === "time" && t === "year" && !$("year").value) return $("year").focus();
    if (id === "time" && t === "range" && !($("from").value && $("to").value)) return $("from").focus();
    if ($("q").value.trim()) runSearch(true);
  });
  $("chat-form").addEventListener("submit", (e) => { e.preventDefault(); sendChat(); });
  $("chat-new").addEventListener("click", () => { conversation = ""; $("chat-log").replaceChildren(); $("trace").hidden = true; });
  $("tab-search").addEventListener("click", () => { showTab("search"); history.replaceState(null, "", location.pathname + location.search); });
  $("tab-chat").addEventListener("click", () => { showTab("chat"); history.replaceState(null, "", location.pathname + location.search + "#chat"); });
  document.querySelector(".tabs").addEventListener("keydown", (e) => {
    if (e.key !== "ArrowLeft" && e.key !== "ArrowRight") return;
    const next = $("tab-search").getAttribute("aria-selected") === "true" ? "chat" : "search";
    $("tab-" + next).click();
    $("tab-" + next).focus();
  });
  window.addEventListener("popstate", () => { fillForm(new URLSearchParams(location.search)); if (!refuseUnknown()) runSearch(false); });
  $("key-form").addEventListener("submit", (e) => {
    e.preventDefault();
    sessionStorage.setItem(KEY, $("api-key").value.trim());
    $("key-form").hidden = true;
    boot();
  });
  showTab(location.hash === "#chat" ? "chat" : "search");
  boot();
}

// boot loads the index facts and runs the URL's search; it runs again once a key is given.
async function boot() {
  showError(null);
  try {
    await loadStats();
  } catch (err) {
    showError(err);
    if (err instanceof APIError && err.status === 401) return;
  }
  if (refuseUnknown()) return;
  if ($("q").value.trim()) runSearch(false);
}

// refuseUnknown shows the refusal of a page URL with a parameter the page does not read
// (source=, min_score=), as the server's PageQuery words it, instead of a wider search.
function refuseUnknown() {
  for (const k of new URLSearchParams(location.search).keys()) {
    if (fields.includes(k)) continue;
    showError('unknown parameter "' + k + '": the page reads ' + fields.join(", ") + "; GET /v1/search takes every field of the query");
    return true;
  }
  return false;
}

start();
