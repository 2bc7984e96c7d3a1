"""The mirror status page served at ``GET /mirrors/ui``: one self-contained HTML document (no external
script, style sheet or font) whose script reads ``/mirrors`` (next to the page, so it works behind a
path prefix) every :data:`REFRESH_S` seconds and renders each flow: its status and reasons, a table of
its active conditions (code, severity, cluster, subject, since, message; pyconnect.conditions), the age
of the newest heartbeat that crossed it, a row per topic (with record lag and lag in time), the
checkpoint latency per group, and the connectors with their task states and (masked) configs. Text is
inserted as text, never as HTML. Each flow element carries ``data-flow`` and ``data-status``, each
condition row ``data-code``, each topic row ``data-topic`` and ``data-state``, for scripts and tests.
"""

from __future__ import annotations

REFRESH_S = 5

PAGE = """<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>pyconnect mirrors</title>
<style>
  :root { --ok: #1a7f37; --bad: #cf222e; --warn: #9a6700; --muted: #57606a; --line: #d0d7de; }
  body { font: 14px/1.4 system-ui, sans-serif; margin: 1.5rem; color: #1f2328; background: #f6f8fa; }
  h1 { font-size: 1.3rem; margin: 0 0 .25rem; }
  #meta { color: var(--muted); margin-bottom: 1rem; }
  .flow { background: #fff; border: 1px solid var(--line); border-radius: 6px; padding: 1rem; margin-bottom: 1rem; }
  .flow h2 { font-size: 1.1rem; margin: 0 0 .5rem; display: flex; gap: .75rem; align-items: center; }
  .badge { font-size: .8rem; padding: .1rem .5rem; border-radius: 1rem; color: #fff; background: var(--muted); }
  .IN_SYNC { background: var(--ok); } .LAGGING, .UNKNOWN, .NOT_RUNNING { background: var(--warn); }
  .FAILED, .STALLED { background: var(--bad); }
  tr.critical td.code { color: var(--bad); font-weight: 600; } tr.warning td.code { color: var(--warn); }
  .reasons { color: var(--bad); margin: .25rem 0 .75rem 1rem; padding: 0; }
  .warnings { color: var(--warn, #b8860b); margin: .25rem 0 .75rem 1rem; padding: 0; }
  table { border-collapse: collapse; width: 100%; margin: .5rem 0; }
  th, td { text-align: left; padding: .3rem .5rem; border-bottom: 1px solid var(--line); }
  th { color: var(--muted); font-weight: 600; font-size: .85rem; }
  td.num { text-align: right; font-variant-numeric: tabular-nums; }
  .no { color: var(--bad); font-weight: 600; } .yes { color: var(--ok); }
  .state-STALE, .state-INACTIVE { color: var(--muted); }
  details { margin-top: .25rem; } pre { background: #f6f8fa; padding: .5rem; overflow-x: auto; }
  #error { color: var(--bad); }
</style>
</head>
<body>
<h1>MirrorMaker 2 flows</h1>
<div id="meta">loading...</div>
<div id="error"></div>
<div id="flows"></div>
<script>
"use strict";
const REFRESH_MS = __REFRESH_MS__;
const base = location.pathname.replace(/\\/ui\\/?$/, "");
function el(tag, attrs, ...children) {
  const node = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs || {})) {
    if (k === "class") node.className = v; else node.setAttribute(k, v);
  }
  for (const child of children) {
    if (child !== null && child !== undefined) node.append(child instanceof Node ? child : String(child));
  }
  return node;
}
function ms(v) {
  if (v === null || v === undefined) return "-";
  return v >= 10000 ? (v / 1000).toFixed(1) + " s" : Math.round(v) + " ms";
}
function table(headers, rows) {
  return el("table", {}, el("thead", {}, el("tr", {}, ...headers.map(h => el("th", {}, h)))),
    el("tbody", {}, ...rows));
}
function flowNode(flow) {
  const node = el("section", {class: "flow", "data-flow": flow.flow, "data-status": flow.status},
    el("h2", {}, flow.flow, el("span", {class: "badge " + flow.status}, flow.status),
      el("small", {class: "target"}, "target latency " + ms(flow.target_latency_ms)),
      el("small", {class: "heartbeat"}, flow.heartbeat_age_ms === null || flow.heartbeat_age_ms === undefined
        ? "" : "newest heartbeat " + ms(flow.heartbeat_age_ms) + " old")));
  if (flow.reasons.length) node.append(el("ul", {class: "reasons"}, ...flow.reasons.map(r => el("li", {}, r))));
  if ((flow.warnings || []).length) node.append(el("ul", {class: "warnings"}, ...flow.warnings.map(r => el("li", {}, r))));
  const conditions = flow.conditions || [];
  if (conditions.length) {
    node.append(table(["Condition", "Severity", "Cluster", "Subject", "Task", "Since", "Message"],
      conditions.map(c => el("tr", {"data-code": c.code, class: c.severity},
        el("td", {class: "code"}, c.code), el("td", {}, c.severity), el("td", {}, c.cluster ?? "-"),
        el("td", {}, c.subject || "-"),
        el("td", {}, c.connector ? c.connector + (c.task === null ? "" : "-" + c.task) : "-"),
        el("td", {}, new Date(c.since_ms).toLocaleTimeString()), el("td", {}, c.message)))));
  }
  node.append(table(["Topic", "State", "In sync", "Avg latency", "Record lag", "Lag", "Last record age", "Records", "Lost"],
    flow.topics.map(t => el("tr", {"data-topic": t.topic, "data-state": t.state, title: t.reason || ""},
      el("td", {}, t.topic), el("td", {class: "state-" + t.state}, t.state),
      el("td", {class: t.in_sync === false ? "no" : t.in_sync ? "yes" : ""}, t.in_sync === null ? "-" : (t.in_sync ? "yes" : "no")),
      el("td", {class: "num"}, ms(t.latency_ms)), el("td", {class: "num"}, t.record_lag ?? "-"),
      el("td", {class: "num"}, ms(t.lag_ms)),
      el("td", {class: "num"}, ms(t.last_record_age_ms)), el("td", {class: "num"}, t.records_replicated),
      el("td", {class: "num"}, t.records_lost ?? 0)))));
  if (flow.checkpoints.length) {
    node.append(table(["Consumer group", "Checkpoint latency", "Last", "Partitions"],
      flow.checkpoints.map(c => el("tr", {}, el("td", {}, c.group), el("td", {class: "num"}, ms(c.latency_ms)),
        el("td", {class: "num"}, ms(c.last_latency_ms)), el("td", {class: "num"}, c.partitions)))));
  }
  node.append(table(["Connector", "Kind", "State", "Tasks"], flow.connectors.map(c => el("tr", {},
    el("td", {}, el("details", {}, el("summary", {}, c.name), el("pre", {}, JSON.stringify(c.config, null, 2)))),
    el("td", {}, c.kind), el("td", {}, c.state ?? "-"),
    el("td", {}, c.tasks.map(t => t.id + ": " + t.state + (t.error ? " (" + t.error + ")" : "")).join(", ") || "no tasks")))));
  return node;
}
async function refresh() {
  try {
    const response = await fetch(base, {headers: {Accept: "application/json"}});
    const body = await response.json();
    if (!response.ok) throw new Error(body.message || ("HTTP " + response.status));
    const flows = document.getElementById("flows");
    flows.replaceChildren(...body.flows.map(flowNode));
    if (!body.flows.length) flows.append(el("p", {}, "No MirrorMaker 2 flows on this cluster."));
    document.getElementById("error").textContent = "";
    document.getElementById("meta").textContent =
      "updated " + new Date(body.generated_ms).toLocaleTimeString() + ", refreshing every " + REFRESH_MS / 1000 + " s";
    document.body.setAttribute("data-loaded", "true");
  } catch (e) {
    document.getElementById("error").textContent = "Could not read " + base + ": " + e.message;
  }
}
refresh();
setInterval(refresh, REFRESH_MS);
</script>
</body>
</html>
""".replace("__REFRESH_MS__", str(REFRESH_S * 1000))
