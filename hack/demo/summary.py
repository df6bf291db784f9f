"""Prints what the simulated Cloudflare account holds (make demo)."""
import json
import sys

s = json.load(sys.stdin)
for t in s["tunnels"]:
    if t["deleted_at"]:
        continue
    print(f"tunnel       {t['name']}  id={t['id']}  status={t['status']}  connectors={t['connectors']}  config v{t['config_version']}")
    if t.get("config"):
        for r in json.loads(t["config"]).get("ingress", []):
            print(f"  rule       {r.get('hostname', '*')} {r.get('path', '')} -> {r['service']}".replace('  ->', ' ->'))
for r in s["hostname_routes"]:
    if not r["deleted_at"]:
        print(f"route        {r['hostname']} -> tunnel {r['tunnel_name']}")
for r in s.get("cidr_routes", []):
    if not r["deleted_at"]:
        print(f"net route    {r['network']} -> tunnel {r['tunnel_id']}")
for v in s["services"]:
    print(f"vpc service  {v['name']}  {v['type']}:{v.get('tcp_port')}  host={v['host'].get('hostname')}  id={v['service_id']}")
for d in s["dns_records"]:
    print(f"dns record   {d['name']} {d['type']} {d['content']} proxied={d['proxied']}")
