"""`econ app` and `make app`: listen on 127.0.0.1 unless asked, and stop with the server.

The server test starts a real `python -m econ app`, waits for its port, stops it with SIGTERM
and checks that the port closes and that no Streamlit process is left (every wait is bounded).
"""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import time
import tomllib

import pytest

from econ import cli
from tests.conftest import ROOT

START_TIMEOUT_S = 120.0
STOP_TIMEOUT_S = 30.0


class Executed(Exception):
    pass


@pytest.fixture
def executed(monkeypatch):
    """Capture what `econ app` would run instead of replacing the test process with it."""
    seen = {}

    def execv(path, argv):
        seen.update(path=path, argv=list(argv))
        raise Executed

    monkeypatch.setattr(cli.os, "execv", execv)
    monkeypatch.setattr(cli.os, "chdir", lambda folder: seen.update(cwd=str(folder)))
    return seen


def _option(argv, name):
    return argv[argv.index(name) + 1]


def test_econ_app_listens_on_localhost_by_default(executed):
    port = _free_port()  # `econ app` refuses a port in use before it starts Streamlit
    with pytest.raises(Executed):
        cli.main(["app", "--port", str(port)])
    argv = executed["argv"]
    assert argv[:4] == [sys.executable, "-m", "streamlit", "run"]
    assert _option(argv, "--server.address") == "127.0.0.1"
    assert _option(argv, "--server.port") == str(port)
    assert executed["cwd"] == str(ROOT)  # where .streamlit/config.toml is read


def test_econ_app_host_opens_it_on_purpose(executed):
    with pytest.raises(Executed):
        cli.main(["app", "--host", "0.0.0.0", "--port", str(_free_port())])
    assert _option(executed["argv"], "--server.address") == "0.0.0.0"


def test_app_help_says_what_an_open_host_exposes(capsys):
    with pytest.raises(SystemExit):
        cli.main(["app", "--help"])
    help_text = " ".join(capsys.readouterr().out.split())
    assert "default 127.0.0.1" in help_text and "0.0.0.0 opens the app" in help_text


def test_streamlit_config_and_make_app_default_to_localhost():
    config = tomllib.loads((ROOT / ".streamlit" / "config.toml").read_text())
    assert config["server"]["address"] == "127.0.0.1"
    dry = subprocess.run(
        ["make", "-n", "-o", ".venv/.installed-stamp", "app"],
        cwd=ROOT, capture_output=True, text=True, timeout=30, env=_without("APP_HOST"),
    )
    assert dry.returncode == 0, dry.stderr
    line = next(x for x in dry.stdout.splitlines() if "streamlit run" in x)
    assert "--server.address=127.0.0.1" in line
    opened = subprocess.run(
        ["make", "-n", "-o", ".venv/.installed-stamp", "app", "APP_HOST=0.0.0.0"],
        cwd=ROOT, capture_output=True, text=True, timeout=30,
    )
    assert "--server.address=0.0.0.0" in opened.stdout


def test_streamlit_shows_no_uncaught_exception_details_in_the_browser():
    """Pages show their failures as errors (common.run_page); one they miss must not put its
    message and traceback, which name the server's files, on the visitor's page."""
    from streamlit.config import ShowErrorDetailsConfigOptions

    config = tomllib.loads((ROOT / ".streamlit" / "config.toml").read_text())
    shown = config["client"]["showErrorDetails"]
    assert shown == ShowErrorDetailsConfigOptions.NONE.value  # the least the browser is shown


def _without(name):
    return {k: v for k, v in os.environ.items() if k != name}


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _port_open(port: int) -> bool:
    with socket.socket() as s:
        s.settimeout(1.0)
        return s.connect_ex(("127.0.0.1", port)) == 0


def _serving(port: int) -> list:
    """Processes whose command line serves this port (any left would be orphans)."""
    psutil = pytest.importorskip("psutil")
    found = []
    for proc in psutil.process_iter(["cmdline"]):
        cmdline = proc.info.get("cmdline") or []
        if "streamlit" in " ".join(cmdline) and str(port) in cmdline:
            found.append(proc)
    return found


def test_sigterm_stops_econ_app_and_its_streamlit_server():
    psutil = pytest.importorskip("psutil")
    port = _free_port()
    env = dict(os.environ, PYTHONPATH=str(ROOT), STREAMLIT_SERVER_HEADLESS="true")
    proc = subprocess.Popen(
        [sys.executable, "-m", "econ", "app", "--port", str(port)],
        cwd=ROOT, env=env, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE, start_new_session=True,
    )
    try:
        deadline = time.monotonic() + START_TIMEOUT_S
        while not _port_open(port):
            assert proc.poll() is None, proc.stderr.read().decode(errors="replace")
            assert time.monotonic() < deadline, f"the app did not open port {port}"
            time.sleep(0.5)
        listening = {
            c.laddr.ip
            for c in psutil.net_connections("tcp")
            if c.laddr and c.laddr.port == port and c.status == psutil.CONN_LISTEN
        }
        assert listening == {"127.0.0.1"}
        proc.send_signal(signal.SIGTERM)
        proc.wait(timeout=STOP_TIMEOUT_S)
        deadline = time.monotonic() + STOP_TIMEOUT_S
        while _port_open(port) and time.monotonic() < deadline:
            time.sleep(0.2)
        assert not _port_open(port), "the Streamlit server still serves the port"
        assert _serving(port) == []
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait(timeout=STOP_TIMEOUT_S)
        for orphan in _serving(port):
            orphan.kill()
