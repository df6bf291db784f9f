"""The tour's before/after: what Kubernetes and the simulated Cloudflare
account hold, as one line per object, and what changed between two
snapshots (make tour).

  state.py snapshot KUBE_JSON SIM_JSON > snap.json
  state.py diff BEFORE AFTER          # + added, - gone, ~ changed
  state.py has SIM_JSON KIND VALUE [DETAIL]  # exit 0 when the account holds it
  state.py count SIM_JSON KIND VALUE  # how many it holds
  state.py empty SIM_JSON             # exit 0 when the account holds nothing
"""
import json
import sys


def kube_lines(items):
    out = {}
    for o in items:
        kind, md = o["kind"], o["metadata"]
        ready = ""
        for c in o.get("status", {}).get("conditions", []) or []:
            if c.get("type") == "Ready":
                ready = f"Ready={c['status']} {c.get('reason', '')}".strip()
        out[f"k8s  {kind} {md.get('namespace', '')}/{md['name']}"] = ready
    return out


def sim_lines(s):
    out = {}
    for t in s["tunnels"]:
        if t["deleted_at"]:
            continue
        out[f"cf   tunnel {t['name']}"] = f"{t['status']}, {t['connectors']} connectors"
        for r in json.loads(t["config"]).get("ingress", []) if t.get("config") else []:
            if r.get("hostname"):
                out[f"cf   rule {r['hostname']}{r.get('path', '')}"] = r["service"] + access_check(r)
    for r in s["hostname_routes"]:
        if not r["deleted_at"]:
            out[f"cf   hostname route {r['hostname']}"] = f"tunnel {r['tunnel_name']}"
    for r in s.get("cidr_routes", []):
        if not r["deleted_at"]:
            out[f"cf   network route {r['network']}"] = "routed"
    for v in s["services"]:
        out[f"cf   vpc service {v['name']}"] = f"{v['type']} {v['host'].get('hostname')}"
    for d in s["dns_records"]:
        out[f"cf   dns {d['name']}"] = f"{d['type']} {d['content']} (id {d['id'][:8]})"
    access = s.get("access", {})
    for a in access.get("applications", []) or []:
        names = ", ".join(p["name"] for p in a.get("policies", []) or [])
        out[f"cf   access application {a['domain']}"] = f"{a['name']}: policies {names} (aud {a['aud'][:8]})"
    for p in access.get("policies", []) or []:
        out[f"cf   access policy {p['name']}"] = f"{p['decision']}, used by {p.get('app_count', 0)} application(s)"
    lb = s.get("load_balancing", {})
    pool_names = {p["id"]: p["name"] for p in lb.get("pools", []) or []}
    for m in lb.get("monitors", []) or []:
        host = ",".join((m.get("header") or {}).get("Host", []))
        out[f"cf   monitor {host} {m['id'][:8]}"] = f"{m['type']} {m.get('path', '')} every {m['interval']}s"
    for p in lb.get("pools", []) or []:
        origins = ", ".join(o["address"] for o in p.get("origins", []) or [])
        out[f"cf   pool {p['name']}"] = f"origins {origins}"
    for b in lb.get("load_balancers", []) or []:
        pools = ", ".join(pool_names.get(i, i[:8]) for i in b.get("default_pools", []) or [])
        fallback = pool_names.get(b.get("fallback_pool", ""), b.get("fallback_pool", "")[:8])
        out[f"cf   load balancer {b['name']}"] = f"pools {pools}; fallback {fallback}; steering {b.get('steering_policy') or 'off'}"
    return out


def access_check(rule):
    """What cloudflared checks before the origin: ", Access aud <tag>" for
    a rule that requires an Access token."""
    a = (rule.get("originRequest") or {}).get("access") or {}
    if not a.get("required"):
        return ""
    return f", Access {a.get('teamName', '')} aud {','.join(t[:8] for t in a.get('audTag', []))}"


def has(s, kind, value, detail=""):
    """Whether the account holds kind value (whose description contains
    detail); a rule's value may stop short of its path (rule app.example.com
    matches every rule of that host), and a monitor's is its Host (monitor
    app.example.com matches every monitor probing that host)."""
    key = f"cf   {kind} {value}"
    return any((k == key or (kind == "rule" and k.startswith(key)) or (kind == "monitor" and k.startswith(key + " "))) and detail in v for k, v in sim_lines(s).items())


def count(s, kind, value):
    """How many objects of kind the account holds for value (applications
    for one domain, say)."""
    if kind == "access application":
        return sum(1 for a in s.get("access", {}).get("applications", []) or [] if a["domain"] == value)
    return sum(1 for k in sim_lines(s) if k == f"cf   {kind} {value}")


def main():
    cmd = sys.argv[1]
    if cmd == "snapshot":
        with open(sys.argv[2]) as k, open(sys.argv[3]) as c:
            snap = {**kube_lines(json.load(k)["items"]), **sim_lines(json.load(c))}
        json.dump(snap, sys.stdout)
    elif cmd == "diff":
        with open(sys.argv[2]) as b, open(sys.argv[3]) as a:
            before, after = json.load(b), json.load(a)
        changed = False
        for key in sorted(set(before) | set(after)):
            if key not in before:
                print(f"    + {key}  {after[key]}")
            elif key not in after:
                print(f"    - {key}")
            elif before[key] != after[key]:
                print(f"    ~ {key}  {before[key]} -> {after[key]}")
            else:
                continue
            changed = True
        if not changed:
            print("    (nothing changed)")
    elif cmd == "has":
        with open(sys.argv[2]) as c:
            sys.exit(0 if has(json.load(c), *sys.argv[3:6]) else 1)
    elif cmd == "count":
        with open(sys.argv[2]) as c:
            print(count(json.load(c), sys.argv[3], sys.argv[4]))
    elif cmd == "empty":
        with open(sys.argv[2]) as c:
            left = sim_lines(json.load(c))
        for k in sorted(left):
            print(f"    left: {k}", file=sys.stderr)
        sys.exit(1 if left else 0)
    else:
        sys.exit(f"state.py: unknown command {cmd}")


if __name__ == "__main__":
    main()
