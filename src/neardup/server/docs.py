"""``/docs``: a self-contained API page (no CDN: FastAPI's Swagger UI is blank offline).

The page fetches ``/openapi.json`` and renders each operation (method, path, summary, auth,
request and response schemas) and each schema's fields, with inline JavaScript and CSS only.

>>> 'src=' in PAGE or 'href=' in PAGE  # no external script or style sheet
False
"""

from __future__ import annotations

PAGE = """<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>neardup API</title>
<style>
body{font:15px/1.45 system-ui,sans-serif;max-width:60rem;margin:2rem auto;padding:0 1rem}
.op{border:1px solid #ccc;border-radius:6px;margin:.6rem 0;padding:.5rem .8rem}
.m{display:inline-block;min-width:4.5rem;font-weight:bold;text-transform:uppercase}
.p{font-family:monospace;font-size:1.05em}.d{color:#444;margin:.3rem 0}
code{background:#f3f3f3;padding:0 .25rem}table{border-collapse:collapse}
td{padding:.1rem .8rem .1rem 0;vertical-align:top}
</style></head>
<body><h1 id="title">neardup API</h1><p id="info">Loading /openapi.json ...</p>
<h2>Operations</h2><div id="ops"></div><h2>Schemas</h2><div id="schemas"></div>
<script>
function el(tag, text, cls) {
  const e = document.createElement(tag);
  if (text !== undefined) e.textContent = text;
  if (cls) e.className = cls;
  return e;
}
function name(s) {
  if (!s) return "-";
  if (s.$ref) return s.$ref.split("/").pop();
  if (s.type === "array") return name(s.items) + "[]";
  const alt = s.oneOf || s.anyOf;
  if (alt) return alt.map(name).join(" | ");
  if (s.allOf) return s.allOf.map(name).join(" & ");
  if (s.enum) return s.enum.map(v => JSON.stringify(v)).join(" | ");
  return s.type || s.title || "any";
}
function bodies(content) {
  return Object.entries(content || {}).map(([t, c]) => name(c.schema) + " (" + t + ")");
}
function operation(path, method, op) {
  const box = el("div", undefined, "op");
  const head = el("div");
  head.append(el("span", method, "m"), el("span", path, "p"));
  box.append(head, el("div", op.summary || "", "d"));
  if (op.description) box.append(el("div", op.description, "d"));
  const rows = [];
  if (op.security) rows.push(["auth", op.security.map(s => Object.keys(s)).join(", ")]);
  for (const p of op.parameters || [])
    rows.push(["parameter", p.name + " in " + p.in + ": " + name(p.schema)]);
  if (op.requestBody) rows.push(["request", bodies(op.requestBody.content).join(", ")]);
  for (const [code, r] of Object.entries(op.responses || {}))
    rows.push(["response " + code, [r.description || ""].concat(bodies(r.content)).join(" ")]);
  const t = el("table");
  for (const [k, v] of rows) {
    const tr = el("tr");
    tr.append(el("td", k), el("td", v));
    t.append(tr);
  }
  box.append(t);
  return box;
}
function schema(n, s) {
  const box = el("div", undefined, "op");
  box.append(el("code", n), el("div", s.description || "", "d"));
  const t = el("table");
  for (const [k, v] of Object.entries(s.properties || {})) {
    const tr = el("tr");
    const req = (s.required || []).includes(k) ? " (required)" : "";
    tr.append(el("td", k + req), el("td", name(v)));
    t.append(tr);
  }
  box.append(t);
  return box;
}
fetch("openapi.json").then(r => r.json()).then(spec => {
  document.getElementById("title").textContent = spec.info.title + " " + spec.info.version;
  const auth = Object.keys((spec.components || {}).securitySchemes || {});
  document.getElementById("info").textContent = (spec.info.summary || "") +
    (auth.length ? " Authentication: " + auth.join(", ") + " (Authorization: Bearer TOKEN)." : "");
  const ops = document.getElementById("ops");
  for (const [path, item] of Object.entries(spec.paths))
    for (const [method, op] of Object.entries(item)) ops.append(operation(path, method, op));
  const sch = document.getElementById("schemas");
  for (const [n, s] of Object.entries((spec.components || {}).schemas || {}))
    sch.append(schema(n, s));
}).catch(e => { document.getElementById("info").textContent = "failed: " + e; });
</script></body></html>
"""
