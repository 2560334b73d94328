"use strict";
// Cairn's web console: draws a State (console/state.go) and asks the node
// for the next one every 2 s. Every string from the store goes into the
// page through textContent, never as markup.
(function () {
  const POLL_MS = 2000;
  const $ = (id) => document.getElementById(id);

  function el(tag, text, cls) {
    const e = document.createElement(tag);
    if (text !== undefined && text !== null) e.textContent = String(text);
    if (cls) e.className = cls;
    return e;
  }

  // fill replaces tbody's rows of table id with rows, each [attrs, cells];
  // a cell is a string, [text, class], or an element.
  function fill(id, rows) {
    const body = $(id).tBodies[0];
    body.replaceChildren();
    for (const [attrs, cells] of rows) {
      const tr = el("tr");
      for (const [k, v] of Object.entries(attrs)) tr.setAttribute(k, String(v));
      for (const c of cells) {
        if (c instanceof Node) {
          const td = el("td", null, "wrap");
          td.append(c);
          tr.append(td);
          continue;
        }
        const [text, cls] = Array.isArray(c) ? c : [c, ""];
        tr.append(el("td", text, cls));
      }
      body.append(tr);
    }
  }

  // section shows a section's error, or hides it; it returns the data
  // (undefined when the command failed).
  function section(id, sec) {
    const p = $(id).querySelector(".error");
    p.hidden = !sec || !sec.error;
    p.textContent = sec && sec.error ? "No answer: " + sec.error : "";
    return sec && !sec.error ? sec.data : undefined;
  }

  const when = (t) => (t ? String(t).replace("T", " ").replace(/\.\d+/, "").replace("Z", "") : "");

  function healthClass(s) {
    s = String(s || "").toLowerCase();
    if (s === "healthy" || s === "ok" || s.startsWith("running") || s === "succeeded") return "ok";
    if (s === "unreachable" || s === "not reported" || s === "offline" || s === "read-only" || s === "error" || s === "down") return "bad";
    return "warn";
  }

  // bytes words a byte count in binary units: 12.3 GiB.
  function bytes(n) {
    const units = ["B", "KiB", "MiB", "GiB", "TiB", "PiB"];
    let i = 0;
    while (n >= 1024 && i < units.length - 1) { n /= 1024; i++; }
    return (i === 0 ? String(n) : n.toFixed(1)) + " " + units[i];
  }

  function badge(text, cls) {
    const b = el("span", text, "badge " + (cls || ""));
    return b;
  }

  function drawHeader(s, ping, topo, verify) {
    const store = (ping && ping.store) || (topo && topo.store) || "store";
    $("store").textContent = store;
    document.title = "Cairn console: " + store;
    const bits = ["seen from " + s.node + " at " + when(s.time) + " UTC"];
    if (topo) {
      const zones = new Set((topo.nodes || []).map((n) => n.zone));
      bits.push("topology #" + topo.topology_seq, topo.partitions + " partitions", zones.size + (zones.size === 1 ? " zone" : " zones"));
    }
    $("where").textContent = bits.join(" · ");
    const sum = $("summary");
    sum.replaceChildren();
    if (ping) {
      const ss = ping.shard_status || {};
      sum.append(badge(ss.healthy + " of " + ss.total + " shards healthy", ss.healthy === ss.total ? "ok" : "bad"));
      for (const k of ["writable_degraded", "read_only", "offline"]) {
        if (ss[k]) sum.append(badge(ss[k] + " " + k.replace("_", "-"), k === "writable_degraded" ? "warn" : "bad"));
      }
      sum.append(badge("admin " + ping.admin_status, healthClass(ping.admin_status)));
      const known = Object.values(rates);
      if (known.length) sum.append(badge(perSecond(known.reduce((a, r) => a + r[0], 0)) + " requests", ""));
    }
    if (verify) {
      const v = (verify.violations || []).length, w = (verify.warnings || []).length;
      sum.append(badge(v + (v === 1 ? " violation" : " violations") + ", " + w + (w === 1 ? " warning" : " warnings"), v ? "bad" : w ? "warn" : "ok"));
    }
    const problems = !ping || !verify || s.ping.problems || s.verify.problems;
    sum.append(badge(problems ? "problems" : "no problems", problems ? "bad" : "ok"));
    const note = (ping && ping.note) || "";
    $("note").hidden = !note;
    $("note").textContent = note;
  }

  function drawVerify(verify) {
    const ul = $("verify");
    ul.replaceChildren();
    if (!verify) return;
    for (const v of verify.violations || []) ul.append(el("li", "violation · " + v.subject + ": " + v.message, "bad"));
    for (const w of verify.warnings || []) ul.append(el("li", "warning · " + w.subject + ": " + w.message, "warn"));
    if (!ul.children.length) ul.append(el("li", "no violations, no warnings", "ok"));
  }

  // Requests per second and latency: each node's KV calls between the last
  // two states with different times; none until a second state comes, or
  // for a node whose counts went down (it restarted, or installed a
  // topology). The latency is the 99th percentile of the calls in that
  // interval, read from the node's histogram: the bound of its bucket.
  let counted = null; // {t: ms, bySN: {sn: {req, err, read, write}}}
  let rates = {};     // sn -> [requests/s, errors/s]
  let p99s = {};      // sn -> [read p99, write p99] (strings, "" for no calls)
  function updateRates(s, ping) {
    if (!ping) return;
    const t = Date.parse(s.time);
    if (counted && !(t > counted.t)) return; // the same state again
    const now = {};
    for (const n of ping.storage_nodes || []) {
      if (n.status === "RUNNING") {
        now[n.sn] = { req: n.requests || 0, err: n.request_errors || 0, read: n.read_latency, write: n.write_latency };
      }
    }
    if (counted) {
      const dt = (t - counted.t) / 1000;
      rates = {};
      p99s = {};
      for (const [sn, c] of Object.entries(now)) {
        const p = counted.bySN[sn];
        if (!p || c.req < p.req || c.err < p.err) continue;
        rates[sn] = [(c.req - p.req) / dt, (c.err - p.err) / dt];
        p99s[sn] = [p99(c.read, p.read), p99(c.write, p.write)];
      }
    }
    counted = { t: t, bySN: now };
  }

  // p99 is the 99th percentile of the calls histogram now counted beyond
  // before, as "≤ bound" ("" if there were none, or the counts went down).
  function p99(now, before) {
    if (!now || !before || !now.counts || !before.counts) return "";
    const d = now.counts.map((c, i) => c - (before.counts[i] || 0));
    if (d.some((c) => c < 0)) return "";
    const total = d.reduce((a, c) => a + c, 0);
    if (!total) return "";
    const want = Math.max(1, Math.ceil(total * 0.99));
    let seen = 0;
    for (let i = 0; i < d.length; i++) {
      seen += d[i];
      if (seen >= want) {
        const b = now.bounds_us || [];
        return i < b.length ? "≤ " + micros(b[i]) : "> " + micros(b[b.length - 1]);
      }
    }
    return "";
  }

  function micros(us) {
    if (us < 1000) return us + " µs";
    if (us < 1000000) return us / 1000 + " ms";
    return us / 1000000 + " s";
  }

  function perSecond(x) {
    return (x < 10 ? x.toFixed(1) : Math.round(x).toLocaleString("en-US")) + "/s";
  }

  function rateCell(sn) {
    const r = rates[sn];
    if (!r) return ["—", "dim"];
    return [perSecond(r[0]) + (r[1] > 0 ? " (" + perSecond(r[1]) + " failed)" : ""), r[1] > 0 ? "warn" : ""];
  }

  function latencyCell(sn) {
    const [read, write] = p99s[sn] || ["", ""];
    const parts = [];
    if (read) parts.push("reads " + read);
    if (write) parts.push("writes " + write);
    return parts.length ? [parts.join(" · "), ""] : ["—", "dim"];
  }

  function drawNodes(ping, topo) {
    const capacity = {};
    for (const n of (topo && topo.nodes) || []) capacity[n.id] = n.capacity;
    fill("nodes", ((ping && ping.storage_nodes) || []).map((n) => {
      const st = n.storage || {};
      let storage = st.state ? st.state + (st.text ? ": " + st.text : "") : "";
      if (st.state && st.avail_bytes >= 0) storage += " · " + bytes(st.avail_bytes) + " free";
      const admin = n.admin ? n.admin.status : "";
      return [{ "data-sn": n.sn }, ["sn" + n.sn, n.addr, n.zone, capacity[n.sn] ?? "",
        [n.status, healthClass(n.status)], rateCell(n.sn), latencyCell(n.sn), [admin, admin ? healthClass(admin) : ""],
        [storage, healthClass(st.state || "ok")], n.version || ""]];
    }));
  }

  // replicasOf lists every replica ping reports, with its shard and node,
  // and those the topology places on a node that reported none of them
  // (an unreachable node's), named as the admin names them: rgS-rnN.
  function replicasOf(ping, topo) {
    const out = [];
    const nodeStatus = {};
    for (const n of (ping && ping.storage_nodes) || []) {
      nodeStatus[n.sn] = n.status;
      for (const r of n.replicas || []) {
        out.push({ name: r.service, shard: String(r.service).split("-")[0], sn: n.sn, status: r.status, applied: r.applied });
      }
    }
    const stuck = new Set();
    for (const sh of (ping && ping.shards) || []) for (const name of sh.stuck || []) stuck.add(name);
    for (const r of out) if (stuck.has(r.name)) r.stuck = true;
    const seen = new Set(out.map((r) => r.name));
    for (const sh of (topo && topo.shards) || []) {
      for (const sn of sh.replicas || []) {
        const name = "rg" + sh.id + "-rn" + sn;
        if (ping && !seen.has(name)) {
          out.push({ name: name, shard: "rg" + sh.id, sn: sn, status: nodeStatus[sn] === "UNREACHABLE" ? "UNREACHABLE" : "NOT REPORTED" });
        }
      }
    }
    const most = {};
    for (const r of out) most[r.shard] = Math.max(most[r.shard] || 0, r.applied || 0);
    for (const r of out) r.lag = r.applied === undefined ? "" : most[r.shard] - r.applied;
    return out.sort((a, b) => a.name.localeCompare(b.name, "en", { numeric: true }));
  }

  function drawShards(ping, topo) {
    const parts = {};
    for (const id of (topo && topo.partition_shard) || []) parts["rg" + id] = (parts["rg" + id] || 0) + 1;
    const reps = replicasOf(ping, topo);
    fill("shards", ((ping && ping.shards) || []).map((sh) => {
      const lead = reps.find((r) => r.shard === sh.shard && String(r.status).includes("MASTER"));
      return [{ "data-shard": sh.shard }, [sh.shard, [sh.status, healthClass(sh.status)], sh.up + " of " + sh.total,
        parts[sh.shard] ?? "", lead ? "sn" + lead.sn : ["none", "bad"]]];
    }));
    fill("replicas", reps.map((r) => [{ "data-replica": r.name }, [r.name, "sn" + r.sn,
      r.stuck ? [r.status + " · cannot follow its leader (verify configuration says why)", "bad"] : [r.status, healthClass(r.status)],
      r.applied ?? "", [r.lag, r.lag > 1000 ? "warn" : ""]]]));
  }

  function command(p) {
    const args = Object.entries(p.args || {}).filter(([k]) => k !== "wait").sort(([a], [b]) => a.localeCompare(b));
    return [p.name, ...args.map(([k, v]) => (v === "true" ? "-" + k : "-" + k + " " + v))].join(" ");
  }

  // The plans whose tasks are shown: those the operator opened, kept
  // across redraws, and the one named by the address (#plan-ID).
  const openPlans = new Set();
  if (location.hash.startsWith("#plan-")) openPlans.add(location.hash.slice("#plan-".length));

  function taskClass(state) {
    return { SUCCEEDED: "ok", ERROR: "bad", RUNNING: "warn" }[state] || "dim";
  }

  // planCell is a plan's command, which opens to its tasks.
  function planCell(p) {
    const id = String(p.id);
    const d = el("details");
    d.open = openPlans.has(id);
    d.addEventListener("toggle", () => (d.open ? openPlans.add(id) : openPlans.delete(id)));
    d.append(el("summary", "plan " + command(p)));
    const ol = el("ol", null, "tasks");
    for (const t of p.tasks || []) {
      const tries = t.attempts > 1 ? " (attempt " + t.attempts + ")" : "";
      ol.append(el("li", t.desc + " · " + (t.state || "PENDING") + tries + (t.error ? ": " + t.error : ""), taskClass(t.state)));
    }
    d.append(ol);
    return d;
  }

  function drawPlans(plans) {
    fill("plans", (plans || []).map((p) => {
      const tasks = p.tasks || [];
      const done = tasks.filter((t) => t.state === "SUCCEEDED").length;
      const current = tasks.find((t) => t.state && t.state !== "SUCCEEDED") || null;
      let task = current ? current.desc + (current.error ? ": " + current.error : "") : "";
      if (!task && p.error) task = p.error;
      return [{ "data-plan": p.id }, [String(p.id), planCell(p), [p.state, healthClass(p.state)],
        done + " of " + tasks.length, [task, "wrap"], when(p.created), when(p.ended)]];
    }));
  }

  function drawEvents(events) {
    const list = (events || []).slice().reverse();
    fill("events", list.map((e) => [{ "data-seq": e.seq }, [when(e.time), [e.text, "wrap"]]]));
  }

  function render(s) {
    const ping = section("sec-nodes", s.ping);
    section("sec-shards", s.ping);
    const verify = section("sec-verify", s.verify);
    const topo = s.topology && !s.topology.error ? s.topology.data : undefined;
    updateRates(s, ping);
    drawHeader(s, ping, topo, verify);
    drawVerify(verify);
    drawNodes(ping, topo);
    drawShards(ping, topo);
    drawPlans(section("sec-plans", s.plans));
    drawEvents(section("sec-events", s.events));
  }

  let failingSince = null;
  async function poll() {
    try {
      const r = await fetch("/console/state.json", { cache: "no-store", credentials: "same-origin" });
      if (!r.ok) throw new Error("HTTP " + r.status + ": " + (await r.text()).trim());
      render(await r.json());
      failingSince = null;
      $("conn").hidden = true;
    } catch (e) {
      failingSince = failingSince || new Date();
      $("conn").hidden = false;
      $("conn").textContent = "This node has not answered since " + failingSince.toISOString().slice(11, 19) +
        " UTC (" + e.message + "); showing what it said last.";
    }
    setTimeout(poll, POLL_MS);
  }

  render(JSON.parse($("state").textContent));
  setTimeout(poll, POLL_MS);
})();
