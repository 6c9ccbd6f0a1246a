# SPDX-License-Identifier: Apache-2.0
# deploy/kubernetes, validated offline: both kustomizations render
# (kubectl kustomize); every object matches the Kubernetes API schema
# (lib/k8s_schema.py: python3-kubernetes' models, unknown fields refused);
# `kubectl apply --dry-run=client --validate=false` accepts them against a
# stub API server on loopback that only answers discovery (no cluster); and
# what the manifests promise holds: limits on every container, TLS from
# Secrets and never --insecure, the agents dial the manager Service's port,
# every program option exists in that program's --help, the plan ConfigMap
# validates, no container is privileged and the agents keep no capability;
# block devices appear only in raw-devices, as volumeDevices of block-mode
# claims, each named by --allow and on labelled nodes only; NetworkPolicies
# let agents take connections only from the manager on the agent port, and
# the manager reach agents only on that port (and DNS).
source "$(dirname "$0")/lib/common.bash"
K8S=$IOF_SRC/deploy/kubernetes
PY=/usr/bin/python3
command -v kubectl >/dev/null 2>&1 || skip "kubectl not installed (Debian: kubernetes-client)"
[ -x "$PY" ] && "$PY" -c 'import yaml, kubernetes.client' 2>/dev/null ||
    skip "python3-yaml and python3-kubernetes not installed for $PY"

for k in base raw-devices; do
    kubectl kustomize "$K8S/$k" >"$T/$k.yaml" 2>"$T/err" || { cat "$T/err"; fail "kubectl kustomize $k"; }
    "$PY" "$IOF_SRC/tests/integration/lib/k8s_schema.py" <"$T/$k.yaml" >"$T/schema" ||
        { cat "$T/schema"; fail "deploy/kubernetes/$k: schema check"; }
    ok "$k: $(cat "$T/schema")"
done

# kubectl apply --dry-run=client against a stub API server: discovery for the
# kinds used, 404 for every object (so each is "created").
"$PY" - >"$T/port" 2>"$T/api.log" <<'PYEOF' &
import json, sys
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
RES = {
    "/api/v1": [("namespaces", "Namespace", False), ("services", "Service", True),
                ("configmaps", "ConfigMap", True), ("secrets", "Secret", True),
                ("persistentvolumeclaims", "PersistentVolumeClaim", True),
                ("persistentvolumes", "PersistentVolume", False)],
    "/apis/apps/v1": [("daemonsets", "DaemonSet", True), ("statefulsets", "StatefulSet", True)],
    "/apis/batch/v1": [("jobs", "Job", True)],
    "/apis/networking.k8s.io/v1": [("networkpolicies", "NetworkPolicy", True)],
    "/apis/storage.k8s.io/v1": [("storageclasses", "StorageClass", False)],
}
class Stub(BaseHTTPRequestHandler):
    def log_message(self, *a):
        sys.stderr.write(self.path + "\n")
    def reply(self, code, obj):
        body = json.dumps(obj).encode()
        self.send_response(code)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)
    def do_GET(self):
        p = self.path.split("?")[0]
        if p == "/api":
            return self.reply(200, {"kind": "APIVersions", "versions": ["v1"]})
        if p == "/apis":
            return self.reply(200, {"kind": "APIGroupList", "apiVersion": "v1", "groups": [
                {"name": g, "versions": [{"groupVersion": g + "/v1", "version": "v1"}],
                 "preferredVersion": {"groupVersion": g + "/v1", "version": "v1"}}
                for g in ("apps", "batch", "networking.k8s.io", "storage.k8s.io")]})
        if p in RES:
            gv = p[len("/apis/"):] if p.startswith("/apis/") else "v1"
            return self.reply(200, {"kind": "APIResourceList", "groupVersion": gv, "resources": [
                {"name": n, "singularName": k.lower(), "namespaced": ns, "kind": k,
                 "verbs": ["create", "delete", "get", "list", "patch", "update", "watch"]}
                for n, k, ns in RES[p]]})
        return self.reply(404, {"kind": "Status", "apiVersion": "v1", "status": "Failure",
                                "reason": "NotFound", "code": 404, "message": "not found"})
    def do_POST(self):
        self.reply(405, {"kind": "Status", "status": "Failure", "code": 405})
srv = ThreadingHTTPServer(("127.0.0.1", 0), Stub)
print(srv.server_address[1], flush=True)
srv.timeout = 1
import time
end = time.time() + 120  # bounded: gone after two minutes whatever happens
while time.time() < end:
    srv.handle_request()
PYEOF
API_PID=$!
iof_on_exit "kill $API_PID 2>/dev/null"
for _ in $(seq 100); do [ -s "$T/port" ] && break; sleep 0.05; done
[ -s "$T/port" ] || fail "stub API server did not start"
cat >"$T/kubeconfig" <<KEOF
apiVersion: v1
kind: Config
clusters: [{name: offline, cluster: {server: "http://127.0.0.1:$(cat "$T/port")"}}]
contexts: [{name: offline, context: {cluster: offline, user: nobody}}]
users: [{name: nobody, user: {}}]
current-context: offline
KEOF
for k in base raw-devices; do
    KUBECONFIG=$T/kubeconfig timeout 60 kubectl apply --dry-run=client --validate=false \
        --cache-dir="$T/kcache" -f "$T/$k.yaml" >"$T/apply" 2>&1 || { cat "$T/apply"; fail "kubectl apply --dry-run=client $k"; }
    n=$(grep -c 'created (dry run)' "$T/apply")
    [ "$n" -eq "$(grep -c '^kind:' "$T/$k.yaml")" ] || { cat "$T/apply"; fail "$k: not every object was accepted"; }
    ok "$k: kubectl apply --dry-run=client --validate=false: $n objects"
done

# What the manifests promise.
"$IOF_BIN/dynamo" --help >"$T/dynamo.help"
"$IOFLEET" run --help >"$T/run.help"
for k in base raw-devices; do
    "$PY" - "$T/$k.yaml" "$k" "$T/dynamo.help" "$T/run.help" "$T/plan-$k.json" <<'PYEOF' || fail "deploy/kubernetes/$k: see above"
import re, sys, yaml
docs = [d for d in yaml.safe_load_all(open(sys.argv[1])) if d]
variant, dyn_help, run_help, plan_out = sys.argv[2], open(sys.argv[3]).read(), open(sys.argv[4]).read(), sys.argv[5]
errs = []
by_kind = {}
for d in docs:
    by_kind.setdefault(d["kind"], []).append(d)
def opts(help_text):
    pat = r"^  (?:-[a-zA-Z], )?(--[a-z][a-z-]*)|^      (--[a-z][a-z-]*)"
    return {a or b for a, b in re.findall(pat, help_text, re.M)}
(svc,) = [o for o in by_kind["Service"] if o["metadata"]["name"] == "iofleet-manager"]
svc_name = f"{svc['metadata']['name']}.{svc['metadata']['namespace']}.svc:{svc['spec']['ports'][0]['port']}"
AGENT_PORT = 7066  # dynamo --listen's default, and the manager Service's port
def privileged(node, path):
    if isinstance(node, dict):
        for k, v in node.items():
            if k == "privileged" and v is not False:
                errs.append(f"{path}.privileged: {v}")
            privileged(v, f"{path}.{k}")
    elif isinstance(node, list):
        for i, v in enumerate(node):
            privileged(v, f"{path}[{i}]")
for d in docs:
    privileged(d, f"{d['kind']} {d['metadata']['name']}")
agents = by_kind.get("DaemonSet", []) + by_kind.get("StatefulSet", [])
if len(agents) != 1:
    errs.append(f"{len(agents)} agent workloads (DaemonSet or StatefulSet), want 1")
for kind, known in (("agents", opts(dyn_help)), ("Job", opts(run_help))):
    obj = agents[0] if kind == "agents" else by_kind[kind][0]
    kind = obj["kind"]
    spec = obj["spec"]["template"]["spec"]
    vols = {v["name"]: v for v in spec.get("volumes", [])}
    for c in spec["containers"]:
        where = f"{kind} {obj['metadata']['name']} container {c['name']}"
        for what in ("limits", "requests"):
            r = c.get("resources", {}).get(what, {})
            if "cpu" not in r or "memory" not in r:
                errs.append(f"{where}: no resources.{what} cpu and memory")
        args = c.get("args", [])
        names = [a.split("=", 1)[0] for a in args if a.startswith("--")]
        for n in names:
            if n not in known:
                errs.append(f"{where}: option {n} is not in the program's --help")
        if "--insecure" in names:
            errs.append(f"{where}: --insecure")
        secret_mounts = [m["mountPath"] for m in c.get("volumeMounts", []) if "secret" in vols.get(m["name"], {})]
        for t in ("--tls-ca", "--tls-cert", "--tls-key"):
            vals = [a.split("=", 1)[1] for a in args if a.startswith(t + "=")]
            if len(vals) != 1 or not any(vals[0].startswith(m + "/") for m in secret_mounts):
                errs.append(f"{where}: {t} is not one file from a Secret volume")
        sc = c.get("securityContext", {})
        if sc.get("capabilities", {}).get("drop") != ["ALL"] or sc.get("capabilities", {}).get("add"):
            errs.append(f"{where}: capabilities {sc.get('capabilities')}, want drop ALL and no add")
        if sc.get("allowPrivilegeEscalation") is not False:
            errs.append(f"{where}: privilege escalation allowed")
        if kind != "Job":
            mgr = [a.split("=", 1)[1] for a in args if a.startswith("--manager=")]
            if mgr != [svc_name]:
                errs.append(f"{where}: --manager {mgr} is not the Service {svc_name}")
            allowed = {a.split("=", 1)[1] for a in args if a.startswith("--allow=")}
            mounts = {m["mountPath"]: m["name"] for m in c.get("volumeMounts", [])}
            host_devs = [n for n, v in vols.items() if "hostPath" in v and
                         (v["hostPath"].get("type") in ("BlockDevice", "CharDevice") or
                          v["hostPath"]["path"].startswith("/dev"))]
            if host_devs:
                errs.append(f"{where}: host device volumes {host_devs} (use block-mode claims)")
            # Block devices: volumeDevices of claims with volumeMode Block.
            claims = {t["metadata"]["name"]: t["spec"] for t in obj["spec"].get("volumeClaimTemplates", [])}
            for n, v in vols.items():
                if "persistentVolumeClaim" in v:
                    pvc = [o for o in by_kind.get("PersistentVolumeClaim", [])
                           if o["metadata"]["name"] == v["persistentVolumeClaim"]["claimName"]]
                    claims[n] = pvc[0]["spec"] if pvc else {}
            devs = {}
            for vd in c.get("volumeDevices", []):
                if claims.get(vd["name"], {}).get("volumeMode") != "Block":
                    errs.append(f"{where}: volumeDevice {vd['name']} is not a claim with volumeMode Block")
                devs[vd["devicePath"]] = vd["name"]
            if variant == "base":
                if devs or allowed:
                    errs.append(f"{where}: base has devices {sorted(devs)} or --allow {sorted(allowed)}")
            else:
                if not devs:
                    errs.append(f"{where}: raw-devices gives no block device")
                for path in devs:
                    if path not in allowed:
                        errs.append(f"{where}: device {path} is not named by --allow")
                if set(allowed) - set(devs):
                    errs.append(f"{where}: --allow {sorted(set(allowed) - set(devs))} without a device")
                if not spec.get("nodeSelector"):
                    errs.append(f"{where}: raw devices on every node (no nodeSelector)")
        else:
            listen = [a.split("=", 1)[1] for a in args if a.startswith("--listen=")]
            port = str(svc["spec"]["ports"][0]["targetPort"])
            if len(listen) != 1 or not listen[0].endswith(":" + port):
                errs.append(f"{where}: --listen {listen} is not the Service's target port {port}")
            if c["securityContext"].get("runAsNonRoot") is not True:
                errs.append(f"{where}: the manager runs as root")
            sel = svc["spec"]["selector"]
            labels = obj["spec"]["template"]["metadata"]["labels"]
            if any(labels.get(k) != v for k, v in sel.items()):
                errs.append(f"{where}: the Service selector {sel} does not select the manager pod")
            plan_path = [a for a in args if a.endswith(".json") and not a.startswith("--")]
            cm = by_kind["ConfigMap"][0]
            mount = [m["mountPath"] for m in c["volumeMounts"]
                     if vols[m["name"]].get("configMap", {}).get("name") == cm["metadata"]["name"]]
            if len(plan_path) != 1 or not mount or not plan_path[0].startswith(mount[0] + "/"):
                errs.append(f"{where}: the plan {plan_path} is not in the ConfigMap volume {mount}")
            else:
                open(plan_out, "w").write(cm["data"][plan_path[0][len(mount[0]) + 1:]])
# NetworkPolicies: agents take connections only from the manager, on the
# agent port; the manager reaches agents only on that port; DNS aside,
# neither reaches anything else.
labels = {k: o["spec"]["template"]["metadata"]["labels"] for k, o in
          (("agent", agents[0]), ("manager", by_kind["Job"][0]))}
def selects(sel, who):
    return (sel and not sel.get("matchExpressions") and sel.get("matchLabels") and
            all(labels[who].get(k) == v for k, v in sel["matchLabels"].items()))
def only(rules, side, peer, what):
    for r in rules:
        peers, ports = r.get(side, []), r.get("ports", [])
        dns = ports and all(p.get("port") == 53 for p in ports) and peers and all(
            "namespaceSelector" in q for q in peers)
        if side == "to" and dns:
            continue
        if not peers or not all(set(q) == {"podSelector"} and selects(q["podSelector"], peer) for q in peers):
            errs.append(f"{what}: a rule with {side} {peers}: not only the {peer}'s pods")
        if ports != [{"protocol": "TCP", "port": AGENT_PORT}]:
            errs.append(f"{what}: a rule with ports {ports}: not only TCP {AGENT_PORT}")
for who, peer in (("agent", "manager"), ("manager", "agent")):
    pols = [p for p in by_kind.get("NetworkPolicy", []) if selects(p["spec"].get("podSelector"), who)]
    if len(pols) != 1:
        errs.append(f"{len(pols)} NetworkPolicies select the {who}'s pods, want 1")
        continue
    ps, what = pols[0]["spec"], f"NetworkPolicy {pols[0]['metadata']['name']}"
    if sorted(ps.get("policyTypes", [])) != ["Egress", "Ingress"]:
        errs.append(f"{what}: policyTypes {ps.get('policyTypes')}, want Ingress and Egress")
    only(ps.get("ingress", []), "from", peer, what)
    only(ps.get("egress", []), "to", peer, what)
for e in errs:
    print("FAIL: " + e)
sys.exit(1 if errs else 0)
PYEOF
    expect_rc 0 "$IOFLEET" validate "$T/plan-$k.json"
    ok "$k: limits, TLS from Secrets, Service address and port, options, unprivileged, devices, NetworkPolicies, plan valid"
done
