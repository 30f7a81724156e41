#!/usr/bin/env python3
"""felix-offload's container image without a Docker engine, from Debian's packages.

    image.py build TARBALL OUT      the OCI image (OUT/oci, tag felix-offload:VERSION, and OUT/felix-offload-VERSION.oci.tar)
    image.py inspect OUT            its config held against the Dockerfile (exit 1 on any difference)
    image.py run OUT WORK           runc: --version, the CDS archive in use, then the daemon over a data root
                                    mounted from WORK answering /health and /read, stopped by SIGTERM

What the image holds comes from deploy/container/Dockerfile, read here line by line: the Debian suite
of its FROM, the packages of its apt-get line, the user and group of its useradd/groupadd line, where
the distribution goes (COPY), the CDS step, and ENV, USER, WORKDIR, VOLUME, EXPOSE, LABEL, ENTRYPOINT,
CMD. A line of another form is refused, so the Dockerfile and this image stay one.

Needs root and Debian's mmdebstrap, umoci and (for run) runc. The base file system (Debian minbase
plus the packages and the user) takes a few minutes to make and is kept in FELIX_IMAGE_CACHE
(default /var/cache/felix-offload-image), keyed by everything that goes into it.
"""
import hashlib
import json
import os
import re
import shlex
import shutil
import socket
import subprocess
import sys
import tarfile
import tempfile
import time
import urllib.error
import urllib.request

HERE = os.path.dirname(os.path.abspath(__file__))
DOCKERFILE = os.path.join(HERE, "Dockerfile")
SUITES = {"debian:bookworm-slim": "bookworm", "debian:bookworm": "bookworm", "debian:12-slim": "bookworm"}


def fail(message):
    print("image.py: " + message, file=sys.stderr)
    sys.exit(1)


def sh(*args, **kwargs):
    print("+ " + " ".join(shlex.quote(str(a)) for a in args), flush=True)
    return subprocess.run([str(a) for a in args], check=True, **kwargs)


def dockerfile():
    """The Dockerfile as settings; any instruction this builder cannot reproduce is refused."""
    spec = {"env": [], "labels": {}, "expose": [], "volumes": []}
    lines, pending = [], ""
    with open(DOCKERFILE, encoding="utf-8") as f:
        for raw in f:
            line = raw.rstrip("\n")
            if pending:
                line = pending + " " + line.strip()
            if line.endswith("\\"):
                pending = line[:-1].rstrip()
                continue
            pending = ""
            if line.strip() and not line.lstrip().startswith("#"):
                lines.append(line.strip())
    for line in lines:
        word, _, rest = line.partition(" ")
        word = word.upper()
        if word == "FROM":
            if rest not in SUITES:
                fail("Dockerfile: FROM %s: only %s are built here" % (rest, ", ".join(SUITES)))
            spec["suite"] = SUITES[rest]
        elif word == "ARG":
            if rest != "VERSION":
                fail("Dockerfile: ARG %s: only ARG VERSION is known" % rest)
        elif word == "RUN":
            m = re.fullmatch(r"apt-get update && apt-get install -y --no-install-recommends ([a-z0-9.+\- ]+?)"
                             r" && rm -rf /var/lib/apt/lists/\*", rest)
            u = re.fullmatch(r"groupadd --gid (\d+) (\S+) && useradd --uid (\d+) --gid (\d+) --home-dir (\S+)"
                             r" --no-create-home --shell (\S+) (\S+)", rest)
            c = re.fullmatch(r"FELIX_OFFLOAD_CDS_DIR=(\S+) (\S+)/bin/felix-offload --version", rest)
            if m:
                spec["packages"] = m.group(1).split()
            elif u:
                spec["group"] = {"gid": int(u.group(1)), "name": u.group(2)}
                spec["user"] = {"uid": int(u.group(3)), "gid": int(u.group(4)), "home": u.group(5),
                                "shell": u.group(6), "name": u.group(7)}
                if spec["user"]["gid"] != spec["group"]["gid"]:
                    fail("Dockerfile: useradd --gid must be the groupadd's")
            elif c:
                spec["cds_dir"], spec["cds_home"] = c.group(1), c.group(2)
            else:
                fail("Dockerfile: RUN %s: not a form this builder reproduces" % rest)
        elif word == "COPY":
            m = re.fullmatch(r"felix-offload-\$\{VERSION\}/ (\S+)/", rest)
            if not m:
                fail("Dockerfile: COPY %s: expected COPY felix-offload-${VERSION}/ /DIR/" % rest)
            spec["home"] = m.group(1)
        elif word == "ENV":
            name, _, value = rest.partition("=")
            if not re.fullmatch(r"[A-Z_][A-Z0-9_]*", name) or " " in value:
                fail("Dockerfile: ENV %s: expected one NAME=value (no spaces)" % rest)
            spec["env"].append(name + "=" + value)
        elif word == "USER":
            spec["run_as"] = rest
        elif word == "WORKDIR":
            spec["workdir"] = rest
        elif word == "VOLUME":
            spec["volumes"] += rest.split()
        elif word == "EXPOSE":
            spec["expose"] += rest.split()
        elif word == "LABEL":
            for pair in shlex.split(rest):
                k, _, v = pair.partition("=")
                spec["labels"][k] = v
        elif word in ("ENTRYPOINT", "CMD"):
            spec[word.lower()] = json.loads(rest)
        else:
            fail("Dockerfile: %s: an instruction this builder does not reproduce" % word)
    for key in ("suite", "packages", "user", "home", "cds_dir", "run_as", "entrypoint", "cmd"):
        if key not in spec:
            fail("Dockerfile: nothing gives the image's %s" % key)
    if spec["cds_home"] != spec["home"]:
        fail("Dockerfile: the CDS step runs %s, the distribution goes to %s" % (spec["cds_home"], spec["home"]))
    return spec


def base_rootfs(spec):
    """Debian minbase with the packages and the user: a directory, made once per key."""
    cache = os.environ.get("FELIX_IMAGE_CACHE", "/var/cache/felix-offload-image")
    os.makedirs(cache, exist_ok=True)
    u, g = spec["user"], spec["group"]
    hook = ("chroot \"$1\" groupadd --gid %d %s && chroot \"$1\" useradd --uid %d --gid %d --home-dir %s"
            " --no-create-home --shell %s %s" % (g["gid"], g["name"], u["uid"], u["gid"], u["home"], u["shell"], u["name"]))
    args = ["--variant=minbase", "--include=" + ",".join(spec["packages"]),
            "--aptopt=APT::Install-Recommends \"false\"",
            "--dpkgopt=path-exclude=/usr/share/doc/*", "--dpkgopt=path-exclude=/usr/share/man/*",
            "--dpkgopt=path-exclude=/usr/share/locale/*",
            # update-alternatives links the JRE's man pages: their directory must exist
            "--essential-hook=mkdir -p \"$1/usr/share/man/man1\"",
            "--customize-hook=" + hook,
            "--customize-hook=rm -rf \"$1/var/lib/apt/lists\"/* \"$1/var/cache/apt\"/*.bin",
            spec["suite"]]
    key = hashlib.sha256(json.dumps(args).encode()).hexdigest()[:16]
    tree = os.path.join(cache, "rootfs-%s-%s" % (spec["suite"], key))
    if os.path.isdir(tree):
        print("base file system from the cache: " + tree, flush=True)
        return tree
    started = time.monotonic()
    shutil.rmtree(tree + ".tmp", ignore_errors=True)
    sh("mmdebstrap", "--quiet", "--format=directory", *args, tree + ".tmp")
    os.replace(tree + ".tmp", tree)
    print("base file system made in %.0f s: %s" % (time.monotonic() - started, tree), flush=True)
    return tree


def version_of(tarball):
    m = re.search(r"felix-offload-(.+)\.tar\.gz$", os.path.basename(tarball))
    if not m:
        fail("%s: expected a felix-offload-VERSION.tar.gz" % tarball)
    return m.group(1)


def build(tarball, out):
    spec = dockerfile()
    version = version_of(tarball)
    rootfs = base_rootfs(spec)
    work = os.path.join(out, "work")
    shutil.rmtree(work, ignore_errors=True)
    os.makedirs(work)
    base = os.path.join(work, "base")
    sh("cp", "-a", rootfs, base)
    home = spec["home"]
    staged = os.path.join(base, home.lstrip("/"))
    os.makedirs(os.path.dirname(staged), exist_ok=True)
    unpacked = os.path.join(work, "dist")
    os.makedirs(unpacked)
    sh("tar", "-xzf", tarball, "-C", unpacked)
    shutil.move(os.path.join(unpacked, "felix-offload-" + version), staged)
    # Whole-second modification times: the tarball keeps milliseconds, which the image's layer rounds to
    # the nearest second, while the launcher keys its archive on the time in whole seconds (stat %Y,
    # which truncates). Without this, a jar made in the second half of a second names another archive
    # in the image than the one the CDS step made, and the image starts without it.
    for d, _, files in os.walk(staged):
        for f in files + [""]:
            p = os.path.join(d, f) if f else d
            st = os.lstat(p)
            os.utime(p, ns=(st.st_atime_ns, st.st_mtime_ns // 1_000_000_000 * 1_000_000_000), follow_symlinks=False)
    # The CDS step of the Dockerfile, in the image's own file system and Java (a chroot with its /proc).
    sh("unshare", "--mount", "--pid", "--fork", "--mount-proc=" + os.path.join(base, "proc"), "chroot", base,
       "/usr/bin/env", "-i", "PATH=/usr/sbin:/usr/bin:/sbin:/bin", "FELIX_OFFLOAD_CDS_DIR=" + spec["cds_dir"],
       home + "/bin/felix-offload", "--version")
    app = os.path.join(work, "app")
    os.makedirs(app)
    shutil.move(staged, os.path.join(app, "felix-offload"))
    for d in [spec.get("workdir")] + spec["volumes"]:
        if d:
            os.makedirs(os.path.join(base, d.lstrip("/")), exist_ok=True)
    for d in spec["volumes"]:
        u = spec["user"]
        os.chown(os.path.join(base, d.lstrip("/")), u["uid"], u["gid"])

    oci = os.path.join(out, "oci")
    shutil.rmtree(oci, ignore_errors=True)
    image = "%s:%s" % (oci, version)
    sh("umoci", "init", "--layout", oci)
    sh("umoci", "new", "--image", image)
    sh("umoci", "insert", "--image", image, base, "/")
    sh("umoci", "insert", "--image", image, os.path.join(app, "felix-offload"), home)
    config = ["umoci", "config", "--image", image, "--os", "linux", "--architecture", "amd64",
              "--author", "felix-offload build", "--config.user", spec["run_as"], "--config.workingdir",
              spec.get("workdir", "/")]
    for e in spec["entrypoint"]:
        config += ["--config.entrypoint", e]
    for c in spec["cmd"]:
        config += ["--config.cmd", c]
    for e in spec["env"]:
        config += ["--config.env", e]
    for p in spec["expose"]:
        config += ["--config.exposedports", p]
    for v in spec["volumes"]:
        config += ["--config.volume", v]
    for k, v in spec["labels"].items():
        config += ["--config.label", "%s=%s" % (k, v)]
    config += ["--config.label", "org.opencontainers.image.version=" + version]
    sh(*config)
    sh("umoci", "gc", "--layout", oci)
    archive = os.path.join(out, "felix-offload-%s.oci.tar" % version)
    with tarfile.open(archive, "w") as t:
        for name in sorted(os.listdir(oci)):
            t.add(os.path.join(oci, name), arcname=name)
    shutil.rmtree(work)
    print("image: %s (OCI layout), %s (%d MiB; podman load -i, or skopeo copy oci-archive:...)"
          % (image, archive, os.path.getsize(archive) >> 20), flush=True)


def image_config(out):
    """The image's config (OCI image config JSON) and its manifest, from the layout under OUT/oci."""
    oci = os.path.join(out, "oci")
    with open(os.path.join(oci, "index.json")) as f:
        index = json.load(f)
    if len(index["manifests"]) != 1:
        fail("%s holds %d images, expected one" % (oci, len(index["manifests"])))
    desc = index["manifests"][0]

    def blob(d):
        algorithm, digest = d["digest"].split(":")
        with open(os.path.join(oci, "blobs", algorithm, digest), "rb") as f:
            data = f.read()
        if hashlib.new(algorithm, data).hexdigest() != digest:
            fail("blob %s does not match its digest" % d["digest"])
        return json.loads(data)

    manifest = blob(desc)
    return blob(manifest["config"]), manifest, desc["annotations"].get("org.opencontainers.image.ref.name")


def inspect(out):
    spec = dockerfile()
    config, manifest, tag = image_config(out)
    c = config["config"]
    want = {
        "Entrypoint": spec["entrypoint"], "Cmd": spec["cmd"], "User": spec["run_as"],
        "WorkingDir": spec.get("workdir", "/"),
        "ExposedPorts": sorted(spec["expose"]), "Volumes": sorted(spec["volumes"]),
    }
    got = {
        "Entrypoint": c.get("Entrypoint"), "Cmd": c.get("Cmd"), "User": c.get("User"),
        "WorkingDir": c.get("WorkingDir"),
        "ExposedPorts": sorted((c.get("ExposedPorts") or {}).keys()), "Volumes": sorted((c.get("Volumes") or {}).keys()),
    }
    problems = ["%s: Dockerfile %r, image %r" % (k, want[k], got[k]) for k in want if want[k] != got[k]]
    env = c.get("Env") or []
    problems += ["Env: %s not in the image" % e for e in spec["env"] if e not in env]
    labels = c.get("Labels") or {}
    problems += ["Label %s: Dockerfile %r, image %r" % (k, v, labels.get(k)) for k, v in spec["labels"].items()
                 if labels.get(k) != v]
    print("image %s: %d layers, %s/%s, entrypoint %s %s, user %s, ports %s, volumes %s"
          % (tag, len(manifest["layers"]), config.get("os"), config.get("architecture"), got["Entrypoint"], got["Cmd"],
             got["User"], ", ".join(got["ExposedPorts"]), ", ".join(got["Volumes"])))
    if problems:
        fail("the image differs from the Dockerfile:\n  " + "\n  ".join(problems))
    print("the image's config agrees with the Dockerfile")


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def unpacked(out, work):
    """The image unpacked once (umoci: its root file system and a runtime config); every bundle shares the root."""
    _, _, tag = image_config(out)
    path = os.path.join(work, "unpacked")
    shutil.rmtree(path, ignore_errors=True)
    sh("umoci", "unpack", "--image", "%s:%s" % (os.path.join(out, "oci"), tag), path, stdout=subprocess.DEVNULL)
    return path


def bundle(out, work, name, args, env=(), mounts=()):
    """An OCI runtime bundle of the image: the shared root read-only, the host's network (to reach 127.0.0.1)."""
    config, _, _ = image_config(out)
    source = os.path.join(work, "unpacked")
    path = os.path.join(work, name)
    shutil.rmtree(path, ignore_errors=True)
    os.makedirs(path)
    with open(os.path.join(source, "config.json")) as f:
        runtime = json.load(f)
    runtime["root"]["path"] = os.path.join(source, "rootfs")
    runtime["process"]["terminal"] = False
    runtime["process"]["args"] = config["config"]["Entrypoint"] + list(args)
    runtime["process"]["env"] = runtime["process"]["env"] + list(env)
    runtime["root"]["readonly"] = True
    runtime["linux"]["namespaces"] = [n for n in runtime["linux"]["namespaces"] if n["type"] != "network"]
    runtime["hostname"] = name
    # The root is read-only, as a hardened pod runs it; the JVM's scratch files go to a tmpfs.
    runtime["mounts"].append({"destination": "/tmp", "type": "tmpfs", "source": "tmpfs",
                              "options": ["nosuid", "nodev", "mode=1777", "size=64m"]})
    for source, target, mode in mounts:
        runtime["mounts"].append({"destination": target, "type": "bind", "source": source,
                                  "options": ["rbind", mode]})
    with open(os.path.join(path, "config.json"), "w") as f:
        json.dump(runtime, f, indent=1)
    return path


def runc(path, name, timeout=120):
    started = time.monotonic()
    r = subprocess.run(["runc", "run", name], cwd=path, stdin=subprocess.DEVNULL, capture_output=True, text=True,
                       timeout=timeout)
    subprocess.run(["runc", "delete", "--force", name], capture_output=True)
    return r, time.monotonic() - started


def get(url):
    try:
        with urllib.request.urlopen(url, timeout=10) as r:
            return r.status, r.read().decode()
    except urllib.error.HTTPError as e:
        return e.code, e.read().decode()


def run(out, work):
    os.makedirs(work, exist_ok=True)
    spec = dockerfile()
    u = spec["user"]
    suffix = str(os.getpid())

    unpacked(out, work)
    path = bundle(out, work, "version", ["--version"])
    r, took = runc(path, "felix-version-" + suffix)
    print(r.stdout + r.stderr, end="")
    if r.returncode != 0 or "felix-offload" not in r.stdout:
        fail("--version in the container exited %d" % r.returncode)
    print("--version in the container: exit 0 in %.2f s" % took)
    # The tool's own classes come from the archive the image's CDS step made (the JVM says where each
    # class came from), so that step took and the launcher finds its archive on a read-only root.
    path = bundle(out, work, "cds", ["--version"], env=["JAVA_OPTS=-Xshare:on -Xlog:class+load=info:stdout"])
    r, took = runc(path, "felix-cds-" + suffix)
    main = [l for l in r.stdout.splitlines() if "dev.felix.offload.cli.FelixOffload " in l]
    if r.returncode != 0 or not main or "shared objects file" not in main[0]:
        fail("the image's CDS archive is not used: exit %d, %s" % (r.returncode, main or (r.stdout + r.stderr)[-2000:]))
    shared = sum(1 for l in r.stdout.splitlines() if "dev.felix.offload." in l and "shared objects file" in l)
    print("the image's class-data archive is used: %d felix-offload classes from it (%s)" % (shared, main[0].split("] ", 1)[-1]))

    # The daemon over a data root mounted from the host, as a sidecar beside a broker would have it.
    data = os.path.join(work, "data")
    store = os.path.join(work, "store")
    etc = os.path.join(work, "etc")
    for d in (store, etc):
        os.makedirs(d, exist_ok=True)
    jar = os.environ.get("FELIX_JAR", os.path.join(HERE, "..", "..", "cli", "target", "felix-offload.jar"))
    if not os.path.isdir(data):
        sh("java", "-jar", jar, "generate", "--data-dir", data, "--streams", "1", "--shards-per-stream", "1",
           "--records", "2000", "--segment-bytes", "65536", stdout=subprocess.DEVNULL)
    for d in (data, store):
        for root, dirs, files in os.walk(d):
            for n in dirs + files + [""]:
                os.chown(os.path.join(root, n), u["uid"], u["gid"])
    port = free_port()
    with open(os.path.join(etc, "felix-offload.yaml"), "w") as f:
        f.write("data-dir: %s\nstore: file:///var/lib/felix/store\nnode-id: container-check\n"
                "offload.schedule: '*/2 * * * * ?'\nhttp.bind: 127.0.0.1\nhttp.port: %d\nshutdown.grace: 10s\n"
                % (spec["volumes"][0], port))
    path = bundle(out, work, "daemon", spec["cmd"], mounts=[
        (data, spec["volumes"][0], "rw"), (store, "/var/lib/felix/store", "rw"), (etc, "/etc/felix-offload", "ro")])
    name = "felix-daemon-" + suffix
    log = open(os.path.join(work, "daemon.log"), "w")
    started = time.monotonic()
    p = subprocess.Popen(["runc", "run", name], cwd=path, stdin=subprocess.DEVNULL, stdout=log, stderr=subprocess.STDOUT)
    try:
        base = "http://127.0.0.1:%d" % port
        status, body, deadline = None, "", time.monotonic() + 90
        while time.monotonic() < deadline and p.poll() is None:
            try:
                status, body = get(base + "/health")
                if status == 200:
                    break
            except OSError:
                pass
            time.sleep(0.5)
        if status != 200:
            fail("the daemon in the container did not answer /health with 200 within 90 s (%s %s); its log:\n%s"
                 % (status, body.strip(), open(os.path.join(work, "daemon.log")).read()))
        print("/health from the container after %.1f s: %d %s" % (time.monotonic() - started, status,
                                                                   json.loads(body)["status"]))
        deadline = time.monotonic() + 90
        shards = None
        while time.monotonic() < deadline:
            status, body = get(base + "/shards")
            shards = json.loads(body)["shards"]
            if shards and shards[0]["remote_segments"] > 0:
                break
            time.sleep(0.5)
        if not shards or shards[0]["remote_segments"] == 0:
            fail("the daemon in the container offloaded nothing within 90 s: " + body)
        status, body = get(base + "/read?shard=%s&from=0&max_bytes=1000" % shards[0]["dir"])
        if status != 200 or '"offset":0' not in body:
            fail("/read from the container: %d %s" % (status, body[:300]))
        print("/shards: %d segments offloaded into the mounted store; /read: 200, offset 0 first"
              % shards[0]["remote_segments"])
        subprocess.run(["runc", "kill", name, "TERM"], check=True)
        code = p.wait(timeout=60)
        if code != 0:
            fail("the daemon in the container exited %d on SIGTERM" % code)
        print("SIGTERM: the daemon in the container exited 0")
    finally:
        if p.poll() is None:
            subprocess.run(["runc", "kill", name, "KILL"], capture_output=True)
            p.wait(timeout=30)
        subprocess.run(["runc", "delete", "--force", name], capture_output=True)
        log.close()


def main(argv):
    if len(argv) == 3 and argv[0] == "build":
        build(os.path.abspath(argv[1]), os.path.abspath(argv[2]))
    elif len(argv) == 2 and argv[0] == "inspect":
        inspect(os.path.abspath(argv[1]))
    elif len(argv) == 3 and argv[0] == "run":
        run(os.path.abspath(argv[1]), os.path.abspath(argv[2]))
    elif len(argv) == 1 and argv[0] == "dockerfile":
        print(json.dumps(dockerfile(), indent=1))
    else:
        print(__doc__, file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
