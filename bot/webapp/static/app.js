// The Mini App: every text goes in as textContent (el() below); no HTML is ever parsed.
// Telegram's script may load after this one (this one is async): it is looked up when used.
const webApp = () => (window.Telegram && window.Telegram.WebApp) || null;
// Telegram also puts the signed initData in the page's fragment: read there, the list is
// asked for at once, while the page and Telegram's script still load.
const fromFragment = new URLSearchParams(location.hash.slice(1)).get("tgWebAppData");
const API = new URL("api/", document.baseURI);
const CATEGORIES = ["context", "person", "preference", "project"];
const state = { tab: "memories", memories: [], deleted: [], query: "", ranked: null, filter: "all", open: null };

function el(tag, props = {}, ...children) {
  const node = document.createElement(tag);
  for (const [key, value] of Object.entries(props)) {
    if (key === "onclick") node.addEventListener("click", value);
    else if (key === "class") node.className = value;
    else node.setAttribute(key, value);
  }
  for (const child of children.flat()) {
    if (child === null || child === undefined || child === false) continue;
    node.append(typeof child === "string" ? document.createTextNode(child) : child);
  }
  return node;
}

async function api(path, options = {}) {
  const tg = webApp();
  const headers = { Authorization: "tma " + (fromFragment || (tg ? tg.initData : "")) };
  if (options.body !== undefined) headers["Content-Type"] = "application/json";
  if (options.etag) headers["If-None-Match"] = options.etag;
  const response = await fetch(new URL(path, API), {
    method: options.method || "GET", headers, credentials: "omit",
    body: options.body === undefined ? undefined : JSON.stringify(options.body),
  });
  if (!response.ok && response.status !== 304) {
    let message = response.status === 401 || response.status === 403
      ? "Open the app from the bot's chat to sign in." : "Something went wrong.";
    try { message = (await response.json()).error || message; } catch (_) { /* not JSON */ }
    throw new Error(message);
  }
  return options.raw ? response : response.json();
}

let toastTimer = null;
function toast(text, undo) {
  const box = document.getElementById("toast");
  document.getElementById("toast-text").textContent = text;
  const button = document.getElementById("toast-undo");
  button.hidden = !undo;
  button.onclick = undo ? async () => { box.hidden = true; await run(undo); } : null;
  box.hidden = false;
  clearTimeout(toastTimer);
  toastTimer = setTimeout(() => { box.hidden = true; }, 8000);
}

async function run(action) {
  try { await action(); } catch (error) { toast(error.message); }
}

function show(...nodes) {
  const view = document.getElementById("view");
  view.replaceChildren(...nodes);
}

function backButton(onBack) {
  const tg = webApp();
  if (!tg || !tg.BackButton) return;
  tg.BackButton.offClick(backButton.current || (() => {}));
  backButton.current = onBack;
  if (onBack) { tg.BackButton.onClick(onBack); tg.BackButton.show(); } else tg.BackButton.hide();
}

function mainButton(text, onPress) {
  const tg = webApp();
  if (!tg || !tg.MainButton) return;
  tg.MainButton.offClick(mainButton.current || (() => {}));
  mainButton.current = onPress;
  if (onPress) { tg.MainButton.setText(text); tg.MainButton.onClick(onPress); tg.MainButton.show(); }
  else tg.MainButton.hide();
}

// Memories: grouped by category, pinned first, those out of the prompt apart.
async function loadMemories() {
  const pending = early;
  early = null;
  const data = await (pending || listMemories());
  state.memories = data.memories;
  state.deleted = data.deleted;
  renderMemories();
}

// The list, or what the page holds when the server says it is unchanged (304).
let listTag = null;
async function listMemories() {
  const response = await api("memories", { raw: true, etag: listTag });
  if (response.status === 304) return { memories: state.memories, deleted: state.deleted };
  const data = await response.json();
  listTag = response.headers.get("ETag");
  return data;
}

// A list is built in one pass off the page and put in at once: each row's words as
// textContent, one click handler on #sections for every row (renderMemories).
function textNode(tag, className, text) {
  const node = document.createElement(tag);
  node.className = className;
  node.textContent = text;
  return node;
}

function memoryRow(item) {
  const row = document.createElement("li");
  row.className = "item";
  row.dataset.id = item.id;
  if (item.subject) row.append(textNode("span", "subject", item.subject + ": "));
  row.append(textNode("span", "content", item.content));
  if (item.pinned) row.append(textNode("span", "badge", "pinned"));
  row.append(textNode("div", "meta", item.category + " · " + item.updated_at.slice(0, 10)));
  return row;
}

function section(title, items) {
  if (!items.length) return null;
  const list = document.createElement("ul");
  list.className = "list";
  const rows = document.createDocumentFragment();
  for (const item of items) rows.append(memoryRow(item));
  list.append(rows);
  return [el("h2", {}, title + " (" + items.length + ")"), list];
}

function openRow(event) {
  const row = event.target.closest(".item[data-id]");
  if (row) run(() => openMemory(row.dataset.id));
}

function visibleMemories() {
  let items = state.memories;
  if (state.ranked) {
    const byId = new Map(items.map((item) => [item.id, item]));
    items = state.ranked.map((id) => byId.get(id)).filter(Boolean);
  }
  if (state.filter === "pinned") items = items.filter((item) => item.pinned);
  else if (state.filter === "archived") items = items.filter((item) => !item.in_block);
  else if (CATEGORIES.includes(state.filter)) items = items.filter((item) => item.category === state.filter);
  return items;
}

function filterChips() {
  const names = ["all", "pinned", "archived", ...CATEGORIES, "deleted"];
  return el("div", { class: "filters" }, names.map((name) => el("button", {
    class: "chip" + (state.filter === name ? " on" : ""), "data-filter": name,
    onclick: () => { state.filter = name; renderMemories(); },
  }, name)));
}

function memorySections() {
  if (state.filter === "deleted") return section("Recently deleted", state.deleted) || el("p", { class: "empty" }, "Nothing deleted lately.");
  const items = visibleMemories();
  if (!items.length) return el("p", { class: "empty" }, state.query ? "No memory matches." : "No memories yet.");
  if (state.ranked) return section("Best matches", items);
  const inBlock = items.filter((item) => item.in_block);
  const parts = [section("Pinned", inBlock.filter((item) => item.pinned))];
  for (const category of CATEGORIES) {
    const heading = category[0].toUpperCase() + category.slice(1);
    parts.push(section(heading, inBlock.filter((item) => !item.pinned && item.category === category)));
  }
  parts.push(section("Archived: not in the prompt", items.filter((item) => !item.in_block)));
  return parts.filter(Boolean).flat();
}

let searchInput = null;
let searchTimer = null;
function renderMemories() {
  backButton(null);
  mainButton(null);
  if (!searchInput) {
    searchInput = el("input", { type: "search", id: "search", placeholder: "Search memories", autocomplete: "off" });
    searchInput.addEventListener("input", () => {
      clearTimeout(searchTimer);
      searchTimer = setTimeout(() => run(search), 150);
    });
  }
  const exports = el("div", { class: "actions" },
    el("button", { class: "act secondary", id: "export-json", onclick: () => run(() => download("json")) }, "Export JSON"),
    el("button", { class: "act secondary", id: "export-md", onclick: () => run(() => download("md")) }, "Export Markdown"));
  const sections = el("div", { id: "sections", onclick: openRow });
  const parts = document.createDocumentFragment();
  parts.append(...[memorySections()].flat());
  sections.append(parts);
  show(searchInput, filterChips(), sections, exports);
}

async function search() {
  const query = searchInput.value.trim();
  state.query = query;
  state.ranked = query ? (await api("search?q=" + encodeURIComponent(query))).ids : null;
  if (state.query === query) document.getElementById("sections").replaceChildren(...[memorySections()].flat());
}

async function download(format) {
  const response = await api("export?format=" + format, { raw: true });
  const name = /filename="([^"]+)"/.exec(response.headers.get("Content-Disposition") || "");
  const link = el("a", { href: URL.createObjectURL(await response.blob()), download: name ? name[1] : "memories." + format });
  document.body.append(link);
  link.click();
  link.remove();
}

// One memory: its versions, and every change the commands can make.
async function openMemory(id) {
  const data = await api("memories/" + encodeURIComponent(id));
  state.open = data;
  const item = data.memory;
  const editor = el("textarea", { id: "editor", maxlength: "500" });
  editor.value = item.content;
  const save = () => run(() => saveEdit(item.id, editor.value));
  const buttons = item.deleted_at
    ? [el("button", { class: "act", id: "restore", onclick: () => run(() => change(item.id, "restore", "Restored.")) }, "Restore")]
    : [el("button", { class: "act", id: "save", onclick: save }, "Save"),
       el("button", { class: "act secondary", id: "pin", onclick: () => run(() => change(item.id, item.pinned ? "unpin" : "pin", item.pinned ? "Unpinned." : "Pinned.")) }, item.pinned ? "Unpin" : "Pin"),
       el("button", { class: "act danger", id: "delete", onclick: () => run(() => change(item.id, "delete", "Deleted.")) }, "Delete")];
  const versions = el("ol", { class: "versions list" }, data.versions.map((version) => el("li", {},
    el("div", {}, version.content),
    el("div", { class: "meta" }, "v" + version.number + " · " + version.created_at.slice(0, 16).replace("T", " ") + " · by " + version.made_by + (version.reason ? " · " + version.reason : "")))));
  show(el("h2", {}, item.category + (item.subject ? " · " + item.subject : "") + (item.deleted_at ? " · deleted" : "")),
    el("div", { class: "item", id: "content" }, item.content),
    item.deleted_at ? null : editor, el("div", { class: "actions" }, buttons),
    el("h2", {}, "Versions"), versions,
    el("h2", {}, "Replies that drew on it"), citingReplies(data.replies));
  backButton(() => run(backToList));
  mainButton(item.deleted_at ? null : "Save", item.deleted_at ? null : save);
}

// The newest replies whose "Based on" sources name this memory: when, and their first words.
function citingReplies(replies) {
  if (!replies.length) return el("p", { class: "empty", id: "replies" }, "No reply has drawn on it yet.");
  return el("ul", { class: "replies list", id: "replies" }, replies.map((reply) => el("li", {},
    el("div", { class: "meta" }, reply.at.slice(0, 16).replace("T", " ")),
    el("div", {}, reply.excerpt))));
}

async function backToList() {
  await loadMemories();
}

async function saveEdit(id, content) {
  const result = await api("memories/" + encodeURIComponent(id) + "/edit", { method: "POST", body: { content } });
  toast("Saved as version " + result.memory.version + ".", undoer(result.change_id, id));
  await openMemory(id);
}

async function change(id, verb, said) {
  const result = await api("memories/" + encodeURIComponent(id) + "/" + verb, { method: "POST" });
  toast(said, result.change_id ? undoer(result.change_id, id) : null);
  if (verb === "delete") await loadMemories(); else await openMemory(id);
}

function undoer(changeId, id) {
  return async () => {
    await api("undo/" + changeId, { method: "POST" });
    toast("Undone.");
    if (state.open && state.open.memory.id === id && document.getElementById("editor")) await openMemory(id);
    else await loadMemories();
  };
}

// Reminders: upcoming, in the owner's zone; cancel or skip the next time.
async function loadReminders() {
  backButton(null);
  mainButton(null);
  const data = await api("reminders");
  const rows = data.reminders.map((reminder) => el("li", { class: "item", "data-reminder": String(reminder.id) },
    el("div", {}, reminder.text),
    el("div", { class: "meta" }, (reminder.next_local || "not again") + (reminder.repeats ? " · repeats" : "")),
    el("div", { class: "actions" },
      reminder.repeats ? el("button", { class: "act secondary", onclick: () => run(() => remind(reminder.id, "skip", "Skipped the next time.")) }, "Skip next") : null,
      el("button", { class: "act danger", onclick: () => run(() => remind(reminder.id, "cancel", "Cancelled.")) }, "Cancel"))));
  show(el("p", { class: "hint" }, "Times in " + data.zone),
    rows.length ? el("ul", { class: "list" }, rows) : el("p", { class: "empty" }, "No upcoming reminders."));
}

async function remind(id, verb, said) {
  await api("reminders/" + id + "/" + verb, { method: "POST" });
  toast(said);
  await loadReminders();
}

// Tidy passes and imports: each with its lines, Undo all (or Redo all for an Undo all).
async function loadBatches() {
  backButton(null);
  mainButton(null);
  const data = await api("batches");
  // Lines name memories by id: show their words where the memory is still there.
  const listed = await listMemories();
  state.memories = listed.memories;
  state.deleted = listed.deleted;
  const words = new Map([...listed.memories, ...listed.deleted].map((item) => [item.id, item.content]));
  const rows = data.batches.map((batch) => {
    const redo = batch.kind === "revert";
    const title = (redo ? "Undo all of #" + batch.reverts_id : batch.kind === "tidy" ? "Tidy pass" : "Import") + " #" + batch.id;
    return el("li", { class: "item", "data-batch": String(batch.id) },
      el("div", { class: "subject" }, title + (batch.undone ? " · undone" : "")),
      el("div", { class: "meta" }, batch.created_at.slice(0, 16).replace("T", " ")),
      el("ul", { class: "list" }, batch.lines.map((line) => el("li", { class: "meta" },
        line.effect + ": " + (words.get(line.memory_id) || "[" + line.memory_id + "]") + (line.reason ? " (" + line.reason + ")" : "")))),
      batch.undone ? null : el("div", { class: "actions" }, el("button", {
        class: "act secondary", onclick: () => run(() => revert(batch.id, redo)),
      }, redo ? "Redo all" : "Undo all")));
  });
  show(rows.length ? el("ul", { class: "list" }, rows) : el("p", { class: "empty" }, "No tidy passes or imports yet."));
}

async function revert(id, redo) {
  const result = await api("batches/" + id + "/revert", { method: "POST" });
  toast((redo ? "Redone: " : "Undone: ") + result.restored + " memories.");
  await loadBatches();
}

const LOADERS = { memories: loadMemories, reminders: loadReminders, batches: loadBatches };
function selectTab(tab) {
  state.tab = LOADERS[tab] ? tab : "memories";
  for (const button of document.querySelectorAll(".tab")) button.classList.toggle("active", button.dataset.tab === state.tab);
  return run(LOADERS[state.tab]);
}

function start() {
  for (const button of document.querySelectorAll(".tab")) button.addEventListener("click", () => selectTab(button.dataset.tab));
  const tg = webApp();
  if (tg) { tg.ready(); if (tg.expand) tg.expand(); }
  selectTab(firstTab);
}

const firstTab = new URLSearchParams(location.search).get("tab") || "memories";
let early = firstTab === "memories" && fromFragment ? listMemories() : null;
if (early) early.catch(() => {}); // its failure is shown when loadMemories awaits it
if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", start, { once: true });
else start();
