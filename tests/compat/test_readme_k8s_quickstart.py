"""The Kubernetes quick start of docs/kubernetes.md, run as written with the real kubectl against the strict emulator.

The commands are read from docs/kubernetes.md (the shell block after "or without Helm (cluster-wide),
then the demo"), so the test and the documentation cannot drift apart. After
``kubectl apply -k manifests`` the operator starts, as its Deployment would in a cluster (here
in-process: the emulator runs only clawplane's server pods), and the emulator's kubelet runs the
example's ``time`` server pod. kubectl runs with its defaults (``--validate=strict``, which the
emulator enforces through server-side field validation).
"""

from __future__ import annotations

import dataclasses
import re
import shlex
from collections.abc import Iterator
from pathlib import Path

import pytest
from tests.k8s.emulator import EmulatorThread
from tests.k8s.operator_run import OperatorRun
from tests.oracles.runners import OracleRunner

ROOT = Path(__file__).resolve().parents[2]
pytestmark = pytest.mark.compat


def quick_start() -> list[str]:
    text = (ROOT / "docs" / "kubernetes.md").read_text(encoding="utf-8")
    match = re.search(r"or without Helm \(cluster-wide\), then the demo:\s*```sh\n(.*?)```", text, re.S)
    assert match, "the Kubernetes quick start block of docs/kubernetes.md is gone"
    return [line.split("#")[0].strip() for line in match.group(1).splitlines() if line.split("#")[0].strip()]


@pytest.fixture
def cluster(kubectl: OracleRunner, tmp_path: Path) -> Iterator[tuple[EmulatorThread, list[OperatorRun]]]:
    operators: list[OperatorRun] = []
    with EmulatorThread() as emu:
        emu.write_kubeconfig(kubectl.env["KUBECONFIG"])
        try:
            yield emu, operators
        finally:
            for op in operators:
                op.stop()


@pytest.mark.timeout(300)  # the docs wait up to 180 s; kubectl and the pods take seconds to start here
def test_the_readme_quick_start_works_as_written(
    kubectl: OracleRunner, cluster: tuple[EmulatorThread, list[OperatorRun]], tmp_path: Path
) -> None:
    emu, operators = cluster
    readme = dataclasses.replace(kubectl, cwd=ROOT)  # the docs' paths are relative to the checkout
    lines = quick_start()
    assert lines[0] == "kubectl apply -k manifests" and any(line.startswith("kubectl wait") for line in lines)
    outputs: list[str] = []
    for line in lines:
        argv = shlex.split(line)
        assert argv[0] == "kubectl", line
        done = readme.run(*argv[1:], timeout=240)
        assert done.returncode == 0, f"{line}\n{done.stdout}\n{done.stderr}"
        assert "Warning" not in done.stderr, f"{line}: {done.stderr}"
        outputs.append(done.stdout)
        if line == "kubectl apply -k manifests":
            assert "customresourcedefinition.apiextensions.k8s.io/mcpservers.clawplane.dev created" in done.stdout
            assert "deployment.apps/clawplane-operator created" in done.stdout
            assert emu.kubeconfig is not None
            kubelet = emu.start_kubelet(tmp_path / "pods")
            operators.append(OperatorRun(emu.kubeconfig, tmp_path / "state", routes=kubelet.resolve).start())
    table = outputs[-1]
    assert re.search(r"mcpserver\.clawplane\.dev/time\s+stdio\s+\d+\s+True", table), table
    assert re.search(r"agent\.clawplane\.dev/assistant\s+\d+\s+", table), table
