"""A real one-node SLURM cluster for the tests (facts: shared/SLURM_LOCAL.md).

`ensure_packages()` installs the Debian packages when they are missing; `LocalCluster` starts a
private munge daemon, slurmctld and slurmd with every path under one temporary directory, two
fake GPUs (GRES backed by /dev/null) so GPU requests are scheduled, and stops exactly what it
started.
"""

from __future__ import annotations

import os
import re
import shutil
import signal
import socket
import subprocess
import tempfile
import time
from pathlib import Path

SYSTEM_CONF = Path("/etc/slurm/slurm.conf")
PACKAGES = ("slurmctld", "slurmd", "slurm-client", "munge")
BINARIES = ("slurmctld", "slurmd", "sbatch", "squeue", "munged")


def missing_binaries() -> list[str]:
    return [b for b in BINARIES if shutil.which(b) is None and not Path(f"/usr/sbin/{b}").exists()]


def ensure_packages(timeout: int = 600) -> None:
    """apt-get the SLURM packages if any binary is missing (needs root and the Debian mirror)."""
    if not missing_binaries():
        return
    if os.geteuid() != 0:
        raise RuntimeError(f"SLURM binaries missing ({', '.join(missing_binaries())}) and not root to install them")
    policy = Path("/usr/sbin/policy-rc.d")
    created = not policy.exists()
    if created:  # no systemd: keep the packages' post-install from starting services
        policy.write_text("#!/bin/sh\nexit 101\n")
        policy.chmod(0o755)
    try:
        env = {**os.environ, "DEBIAN_FRONTEND": "noninteractive"}
        subprocess.run(["apt-get", "update", "-qq"], check=True, env=env, timeout=timeout, capture_output=True)
        subprocess.run(["apt-get", "install", "-y", "-qq", "--no-install-recommends", *PACKAGES], check=True,
                       env=env, timeout=timeout, capture_output=True)
    finally:
        if created:
            policy.unlink()


# Finished jobs stay listed by `squeue --states=all` this long (seconds): the plugin's squeue status
# mode needs >= 3 x its first status-check delay, and the tests read every job of a run after it ends.
MIN_JOB_AGE = 1800

VIRTUAL_CORES = 16  # more than this machine has: GPU jobs ask for cores (cpus_per_gpu) as on a real GPU node


def node_hardware() -> dict:
    """The node as slurm.conf declares it: this machine's memory, and VIRTUAL_CORES cores (slurmd
    accepts the declaration with SlurmdParameters=config_overrides)."""
    out = subprocess.run(["slurmd", "-C"], capture_output=True, text=True, check=True).stdout
    fields = dict(re.findall(r"(\w+)=(\S+)", out.splitlines()[0]))
    cores = max(VIRTUAL_CORES, int(fields["CPUs"]))
    return {"CPUs": str(cores), "Boards": "1", "SocketsPerBoard": "1", "CoresPerSocket": str(cores),
            "ThreadsPerCore": "1", "RealMemory": str(max(1024, int(fields["RealMemory"]) - 1024))}


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class LocalCluster:
    def __init__(self, root: Path, gpus: int = 2):
        self.root, self.gpus = Path(root), gpus
        self.host = socket.gethostname().split(".")[0]
        self.conf = self.root / "slurm.conf"
        self.pid_files: list[Path] = []
        self.munge_dir: Path | None = None
        self.linked_system_config = False

    @property
    def env(self) -> dict:
        return {**os.environ, "SLURM_CONF": str(self.conf)}

    def _munge(self) -> Path:
        # Its own directory directly under /tmp: the munge user cannot enter the test's 0700 tmp dirs.
        state = self.munge_dir = Path(tempfile.mkdtemp(prefix="lengthgen-munge-"))
        state.chmod(0o711)  # munged insists that every client can reach its socket
        key = state / "munge.key"
        key.write_bytes(os.urandom(1024))
        key.chmod(0o400)
        shutil.chown(state, "munge", "munge")
        shutil.chown(key, "munge", "munge")
        sock = state / "munge.socket"
        pid = state / "munged.pid"
        subprocess.run(["runuser", "-u", "munge", "--", "munged", f"--socket={sock}", f"--key-file={key}",
                        f"--pid-file={pid}", f"--log-file={state / 'munged.log'}", f"--seed-file={state / 'seed'}"],
                       check=True, timeout=30)
        self.pid_files.append(pid)
        return sock

    def start(self) -> LocalCluster:
        self.root.mkdir(parents=True, exist_ok=True)
        self.root.chmod(0o755)
        sock = self._munge()
        for d in ("ctld", "spool"):
            (self.root / d).mkdir()
        devices = []
        for i in range(self.gpus):
            device = self.root / f"nvidia{i}"
            device.symlink_to("/dev/null")  # a fake GPU: GRES needs a device file, not a plain file
            devices.append(str(device))
        hardware = " ".join(f"{k}={v}" for k, v in node_hardware().items())
        self.conf.write_text("\n".join([
            "ClusterName=lengthgen-test",
            f"SlurmctldHost={self.host}(127.0.0.1)",
            f"SlurmctldPort={_free_port()}", f"SlurmdPort={_free_port()}",
            "SlurmUser=root", "SlurmdUser=root",
            "AuthType=auth/munge", f"AuthInfo=socket={sock}",
            "ProctrackType=proctrack/linuxproc", "TaskPlugin=task/none",
            "AccountingStorageType=accounting_storage/none", "JobAcctGatherType=jobacct_gather/none",
            "JobCompType=jobcomp/none", f"MinJobAge={MIN_JOB_AGE}", "MailProg=/bin/true", "ReturnToService=2",
            f"StateSaveLocation={self.root / 'ctld'}", f"SlurmdSpoolDir={self.root / 'spool'}",
            f"SlurmctldPidFile={self.root / 'slurmctld.pid'}", f"SlurmdPidFile={self.root / 'slurmd.pid'}",
            f"SlurmctldLogFile={self.root / 'slurmctld.log'}", f"SlurmdLogFile={self.root / 'slurmd.log'}",
            "SelectType=select/cons_tres", "SelectTypeParameters=CR_Core",  # --gpus needs cons_tres
            "SlurmdParameters=config_overrides",
            "GresTypes=gpu",
            f"NodeName={self.host} NodeAddr=127.0.0.1 {hardware} Gres=gpu:{self.gpus} State=UNKNOWN",
            f"PartitionName=main Nodes={self.host} Default=YES MaxTime=INFINITE State=UP",
        ]) + "\n")
        (self.root / "gres.conf").write_text(
            "".join(f"NodeName={self.host} Name=gpu File={d}\n" for d in devices))
        self._system_config()
        subprocess.run(["slurmctld", "-f", str(self.conf)], check=True, env=self.env, timeout=30)
        self.pid_files.append(self.root / "slurmctld.pid")
        subprocess.run(["slurmd", "-N", self.host, "-f", str(self.conf)], check=True, env=self.env, timeout=30)
        self.pid_files.append(self.root / "slurmd.pid")
        deadline = time.time() + 60
        while time.time() < deadline:
            state = subprocess.run(["sinfo", "-h", "-o", "%T"], capture_output=True, text=True, env=self.env).stdout
            if state.strip() == "idle":
                return self
            time.sleep(0.5)
        raise RuntimeError(f"the SLURM node did not become idle: {state!r}\n" + self.logs())

    def _system_config(self) -> None:
        """Point /etc/slurm/slurm.conf at this cluster's config for the job's lifetime: the jobstep
        plugin strips SLURM_* variables (SLURM_CONF too) before its nested srun, so clients inside
        a job only find the default path. An existing file is never replaced."""
        if SYSTEM_CONF.exists() or SYSTEM_CONF.is_symlink():
            raise RuntimeError(f"{SYSTEM_CONF} exists (a SLURM installation is configured here); "
                               "the test cluster will not replace it")
        SYSTEM_CONF.parent.mkdir(parents=True, exist_ok=True)
        SYSTEM_CONF.symlink_to(self.conf)
        self.linked_system_config = True

    def jobs(self, name: str) -> list[dict]:
        """Every job named `name` (the plugin names a run's jobs by its run ID) that squeue still
        lists, finished ones too: `id` is <array job>_<task> for an array's job, `job_id` its own
        SLURM_JOB_ID, `comment` the plugin's rule_<rule>_wildcards_<wildcards>."""
        out = subprocess.run(["squeue", "-h", "--states=all", f"--name={name}", "-o", "%i|%A|%T|%k"],
                             capture_output=True, text=True, env=self.env, check=True, timeout=30).stdout
        return [dict(zip(("id", "job_id", "state", "comment"), line.split("|", 3))) for line in out.splitlines()]

    def logs(self) -> str:
        return "\n".join(p.read_text()[-2000:] for p in self.root.glob("*.log"))

    def stop(self) -> None:
        """Cancel leftover jobs, then stop the daemons this cluster started (by their pid files)."""
        if any(p.name == "slurmctld.pid" for p in self.pid_files):
            try:
                subprocess.run(["scancel", "--partition=main"], env=self.env, capture_output=True, timeout=15)
            except subprocess.TimeoutExpired:
                pass
        for pid_file in reversed(self.pid_files):
            try:
                os.kill(int(pid_file.read_text().strip()), signal.SIGTERM)
            except (FileNotFoundError, ValueError, ProcessLookupError):
                continue
        time.sleep(1)
        if self.munge_dir is not None:
            shutil.rmtree(self.munge_dir, ignore_errors=True)
        if self.linked_system_config and SYSTEM_CONF.is_symlink():
            SYSTEM_CONF.unlink()

    def __enter__(self):
        try:
            return self.start()
        except BaseException:
            self.stop()
            raise

    def __exit__(self, *exc):
        self.stop()
