"""Fresh python3 kernels forked from a process that has already imported the book's libraries.

A kernel started from scratch spends about a CPU-second importing ipykernel, numpy, matplotlib
and the package before a chapter's first line runs; the fixture-edit runs start one per run.
Here one *template* process per test process imports them once and then waits; each kernel is
a ``fork`` of it that has run nothing else, so every run still gets a kernel never used before.

The kernel spec's command is a small *proxy* (this file, ``launch``): it asks the template for a
kernel with its own connection file, working directory, environment and standard streams,
passes on every signal jupyter_client sends it, and exits when the kernel exits; the kernel
exits if the proxy is killed. jupyter_client manages the proxy exactly as it would a kernel.
Should the template not be able to serve a kernel identical to a fresh one (another
environment, for instance, where numpy's SIMD setting would differ), the proxy becomes an
ordinary ``ipykernel`` with ``exec`` instead. Only the standard library is imported at the top:
the proxy must start fast.

    python tests/book/warm_kernel.py serve SOCKET         # the template
    python tests/book/warm_kernel.py launch SOCKET -f CF  # the proxy (the kernel spec's argv)
"""

from __future__ import annotations

import json
import os
import select
import signal
import socket
import sys
from contextlib import suppress

# What jupyter_client adds to a kernel's environment, and what pytest and a terminal change while
# a session runs, all read at run time only (a kernel gets the client's values); every other
# variable must match the template's, since the libraries it imported read them at import time.
ADDED_BY_CLIENT = ("JPY_", "PYDEVD_")
RUN_TIME_ONLY = {"PYTEST_CURRENT_TEST", "COLUMNS", "LINES"}
FORWARDED = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP, signal.SIGQUIT, signal.SIGUSR1)
PRELOADED = (
    "numpy",
    "matplotlib",
    "IPython",
    "ipykernel.kernelapp",
    "ipykernel.ipkernel",
    "ipykernel.zmqshell",
    "llm_from_scratch.autodiff",
    "llm_from_scratch.claims",
    "llm_from_scratch.figures",
    "llm_from_scratch.nn",
    "llm_from_scratch.precision",
    "llm_from_scratch.random",
    "llm_from_scratch.widgets",
)


def _import_time(env: dict[str, str]) -> dict[str, str]:
    """The variables that may have changed what the template's imports did."""
    kept = (k for k in env if not k.startswith(ADDED_BY_CLIENT) and k not in RUN_TIME_ONLY)
    return {k: env[k] for k in kept}


def _same_environment(mine: dict[str, str], theirs: dict[str, str]) -> str | None:
    """None if a kernel with environment ``theirs`` may be forked from ``mine``, else why not."""

    mine, wanted = _import_time(mine), _import_time(theirs)
    differ = sorted(k for k in mine.keys() | wanted.keys() if mine.get(k) != wanted.get(k))
    return f"environment differs in {differ}" if differ else None


def _kernel(request: dict, streams: list[int], sockets: list[socket.socket]) -> None:
    """In the forked child: become a fresh ipykernel for the request; never returns."""
    try:
        for held in sockets:  # the template's: the proxy waits for its connection to close
            held.close()
        signal.signal(signal.SIGCHLD, signal.SIG_DFL)  # the template reaps; a kernel waits
        for target, fd in enumerate(streams):
            os.dup2(fd, target)
            os.close(fd)
        os.chdir(request["cwd"])
        os.environ.clear()
        os.environ.update(request["env"])
        argv = list(request["argv"])
        # ipykernel read JPY_PARENT_PID when the template imported it: pass the client's here
        parent = int(os.environ.get("JPY_PARENT_PID") or 0)
        if parent:
            argv.append(f"--IPKernelApp.parent_handle={parent}")
        watched = []
        for pid in {request["proxy"], parent} - {0}:
            with suppress(OSError):  # already gone: its pidfd cannot be had, nor waited for
                watched.append(os.pidfd_open(pid))

        def exit_with_them() -> None:
            select.select(watched, [], [])
            os._exit(1)  # the proxy or the client ended (SIGKILL cannot be passed on): end too

        import importlib.util
        import threading

        threading.Thread(target=exit_with_them, daemon=True).start()
        sys.argv = [importlib.util.find_spec("ipykernel_launcher").origin, *request["argv"]]
        from ipykernel import kernelapp

        kernelapp.launch_new_instance(argv=argv)
        code = 0
    except BaseException:  # report, then end the child whatever happened
        import traceback

        traceback.print_exc()
        code = 1
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(code)


def serve(path: str) -> None:
    """The template: listen first (proxies queue), import, then fork a kernel per request."""
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    listener.bind(path)
    listener.listen(16)
    started_with = dict(os.environ)
    os.environ.setdefault("MPLBACKEND", "module://matplotlib_inline.backend_inline")  # ipykernel's
    import importlib

    for name in PRELOADED:
        importlib.import_module(name)
    import gc

    # What was imported lives as long as a kernel does: out of the collector's sight (here and,
    # through fork, in every kernel), a full collection no longer walks the libraries' objects.
    gc.freeze()
    signal.signal(signal.SIGCHLD, signal.SIG_IGN)  # ended kernels leave no zombie behind
    while True:
        connection, _ = listener.accept()
        with connection:
            message, streams, _, _ = socket.recv_fds(connection, 1 << 20, 3)
            request = json.loads(message)
            why = _same_environment(started_with, request["env"])
            pid = None if why else os.fork()
            if pid == 0:
                _kernel(request, streams, [listener, connection])
            for fd in streams:
                os.close(fd)
            connection.sendall(json.dumps({"pid": pid, "why": why}).encode())


def launch(path: str, argv: list[str]) -> None:
    """The proxy: a kernel from the template, or an ordinary one if it cannot give one."""
    request = {"argv": argv, "cwd": os.getcwd(), "env": dict(os.environ), "proxy": os.getpid()}
    reply: dict = {"pid": None, "why": "this system cannot wait for a process it did not start"}
    try:
        os.close(os.pidfd_open(os.getpid()))  # Linux 5.3 and later; elsewhere an ordinary kernel
        reply["why"] = "no template"
        with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as connection:
            connection.connect(path)
            socket.send_fds(connection, [json.dumps(request).encode()], [0, 1, 2])
            connection.shutdown(socket.SHUT_WR)
            reply = json.loads(b"".join(iter(lambda: connection.recv(4096), b"")) or b"{}")
    except (AttributeError, OSError):
        pass  # an ordinary kernel, for the reason in reply["why"]
    pid = reply.get("pid")
    if not pid:
        why = reply.get("why") or "the template gave no kernel"
        print(f"warm_kernel: an ordinary kernel ({why})", file=sys.stderr)
        os.execv(sys.executable, [sys.executable, "-m", "ipykernel_launcher", *argv])
    for number in FORWARDED:
        signal.signal(number, lambda received, _: os.kill(pid, received))
    kernel = os.pidfd_open(pid)
    select.select([kernel], [], [])  # retried after each passed-on signal; ends when it exits


NAME = "lfs-warm-python3"
_TEMPLATE: dict = {}  # this process's kernels folder, and its template's environment and stop


def kernels_folder() -> str:
    """A folder holding the kernel spec ``kernels/NAME`` (for JUPYTER_PATH), made once."""
    if "folder" not in _TEMPLATE:
        import atexit
        import shutil
        import tempfile
        from pathlib import Path

        folder = Path(tempfile.mkdtemp(prefix="warm-kernel-"))
        spec = folder / "kernels" / NAME
        spec.mkdir(parents=True)
        socket_path = str(folder / "template.sock")
        argv = [sys.executable, __file__, "launch", socket_path, "-f", "{connection_file}"]
        (spec / "kernel.json").write_text(
            json.dumps({"argv": argv, "display_name": "Python 3", "language": "python"}),
            encoding="utf-8",
        )
        atexit.register(shutil.rmtree, folder, ignore_errors=True)
        _TEMPLATE.update(folder=str(folder), socket=socket_path)
    return _TEMPLATE["folder"]


def ensure_template() -> None:
    """A template with this process's environment: started if there is none or it differs.

    A template with another environment could only give ordinary kernels; the last one is
    stopped when Python exits.
    """
    import atexit
    import subprocess
    import time

    kernels_folder()
    environment = _import_time(dict(os.environ))
    if _TEMPLATE.get("environment") == environment:
        return
    if "stop" in _TEMPLATE:
        _TEMPLATE.pop("stop")()
    path = _TEMPLATE["socket"]
    with suppress(FileNotFoundError):
        os.unlink(path)
    process = subprocess.Popen(
        [sys.executable, __file__, "serve", path],
        stdin=subprocess.DEVNULL,
        cwd=_TEMPLATE["folder"],
    )
    deadline = time.monotonic() + 10
    while not os.path.exists(path) and process.poll() is None and time.monotonic() < deadline:
        time.sleep(0.01)  # bound before it imports: proxies from now on queue

    def stop() -> None:
        atexit.unregister(stop)
        process.terminate()
        process.wait(timeout=10)

    atexit.register(stop)
    _TEMPLATE.update(environment=environment, stop=stop)


def spec_manager():  # -> jupyter_client.kernelspec.KernelSpecManager
    """A spec manager offering kernel ``NAME``, its template running with this environment."""
    from jupyter_client.kernelspec import KernelSpecManager

    ensure_template()
    return KernelSpecManager(kernel_dirs=[os.path.join(kernels_folder(), "kernels")])


if __name__ == "__main__":
    command, socket_path, *rest = sys.argv[1:]
    del sys.path[0]  # as ipykernel_launcher: this folder is not the kernel's path
    if command == "serve":
        serve(socket_path)
    else:
        launch(socket_path, rest)
