"""Run SandboxFusion's runner tests against a rewardd server.

The test_*.py files beside this one are SandboxFusion's own
(sandbox/tests/runners, see README.md). Each builds a RunCodeRequest,
posts it with FastAPI's TestClient to SandboxFusion's app, and asserts on
the RunCodeResponse. Here the modules they import are stand-ins: the
client posts the same JSON (the request model's model_dump, defaults
included) to rewardd's POST /run_code, and the response models read the
answer as SandboxFusion's pydantic models would (its enums by value).

Usage: run.py URL test_x.py... ; prints one JSON line per test:
{"test": name, "file": file, "ok": bool, "error": why it failed}.
"""

import contextlib
import enum
import importlib.util
import io
import json
import os
import sys
import traceback
import types
import urllib.error
import urllib.request


class CommandRunStatus(str, enum.Enum):
    Finished = 'Finished'
    Error = 'Error'
    TimeLimitExceeded = 'TimeLimitExceeded'


class RunStatus(str, enum.Enum):
    Success = 'Success'
    Failed = 'Failed'
    SandboxError = 'SandboxError'


class RunCodeRequest:
    """SandboxFusion's RunCodeRequest: its fields, with its defaults."""

    def __init__(self, **fields):
        self.fields = dict(compile_timeout=10, run_timeout=10, memory_limit_MB=-1, stdin=None, files={}, fetch_files=[])
        self.fields.update(fields)

    def model_dump(self):
        return dict(self.fields)


class CommandRunResult:

    def __init__(self, status, execution_time=None, return_code=None, stdout=None, stderr=None):
        self.status = CommandRunStatus(status)
        self.execution_time = execution_time
        self.return_code = return_code
        self.stdout = stdout
        self.stderr = stderr

    def __repr__(self):
        return 'CommandRunResult(%r)' % self.__dict__


class RunCodeResponse:

    def __init__(self, status, message, compile_result=None, run_result=None, executor_pod_name=None, files=None):
        self.status = RunStatus(status)
        self.message = message
        self.compile_result = CommandRunResult(**compile_result) if compile_result is not None else None
        self.run_result = CommandRunResult(**run_result) if run_result is not None else None
        self.executor_pod_name = executor_pod_name
        self.files = files or {}

    def __repr__(self):
        return 'RunCodeResponse(%r)' % self.__dict__


class Response:

    def __init__(self, status_code, body):
        self.status_code = status_code
        self.body = body

    def json(self):
        return json.loads(self.body)


def client_for(base):

    class TestClient:

        def __init__(self, app):
            pass

        def post(self, path, json=None):
            req = urllib.request.Request(base + path,
                                         data=globals()['json'].dumps(json).encode(),
                                         headers={'Content-Type': 'application/json'})
            try:
                with urllib.request.urlopen(req, timeout=300) as resp:
                    return Response(resp.status, resp.read())
            except urllib.error.HTTPError as e:
                return Response(e.code, e.read())

    return TestClient


def install_stand_ins(base):
    mods = {}
    for name in ['fastapi', 'fastapi.testclient', 'sandbox', 'sandbox.runners', 'sandbox.server',
                 'sandbox.server.sandbox_api', 'sandbox.server.server', 'pytest']:
        mods[name] = sys.modules[name] = types.ModuleType(name)
    mods['fastapi.testclient'].TestClient = client_for(base)
    mods['sandbox.runners'].CommandRunStatus = CommandRunStatus
    api = mods['sandbox.server.sandbox_api']
    api.RunCodeRequest, api.RunCodeResponse, api.RunStatus = RunCodeRequest, RunCodeResponse, RunStatus
    mods['sandbox.server.server'].app = None
    mods['pytest'].mark = type('Marks', (), {'__getattr__': lambda self, name: (lambda f: f)})()


def main():
    base = sys.argv[1].rstrip('/')
    install_stand_ins(base)
    for path in sys.argv[2:]:
        name = os.path.splitext(os.path.basename(path))[0]
        spec = importlib.util.spec_from_file_location(name, path)
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        for test in sorted(t for t in dir(module) if t.startswith('test_') and callable(getattr(module, t))):
            out = {'test': test, 'file': os.path.basename(path), 'ok': True, 'error': ''}
            try:
                with contextlib.redirect_stdout(io.StringIO()):  # what the tests print
                    getattr(module, test)()
            except Exception:
                out['ok'] = False
                out['error'] = traceback.format_exc(limit=-1).strip()[-1500:]
            print(json.dumps(out), flush=True)


if __name__ == '__main__':
    main()
