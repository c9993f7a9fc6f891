#!/usr/bin/env python3
"""Writes test/cases/regression/cases.jsonl: the loop / no-loop cases that other teams' engineers
wrote for their own loop detectors, turned into warden evaluation windows by the written rules in
README.md (same folder). Split "regression": never part of a headline number.

Sources (each read from a pinned commit of a git mirror; see README.md):
  gemini     google-gemini/gemini-cli  (Apache-2.0)  packages/core/src/services/loopDetectionService.test.ts
  openhands  All-Hands-AI/OpenHands    (MIT)         tests/unit/controller/test_is_stuck.py
  roo        RooCodeInc/Roo-Code       (Apache-2.0)  src/core/tools/__tests__/ToolRepetitionDetector.spec.ts

Usage:
  python3 test/cases/regression/convert.py --gemini GITDIR --openhands GITDIR --roo GITDIR [--out FILE]

GITDIR is a git directory (bare is fine) holding the pinned commit (`fetch github:OWNER/NAME`
puts one under /work/.mirror/OWNER+NAME/repo, the default). Files are read with
`git show COMMIT:PATH`. Deterministic: same inputs, same bytes.

How the inputs are recovered (README "Rules"):
  - OpenHands's test is Python: its test methods are executed here, from the file's own syntax
    tree, against small recording stand-ins for OpenHands's event classes; every assertion on
    `is_stuck(headless_mode=True)` records the history at that point and the asserted answer.
  - Gemini CLI's and Roo Code's tests are TypeScript: each test's inputs are transcribed below
    (the loops expanded), and every literal the transcription uses is checked to occur in that
    test's source block at the pinned commit, so a transcription that drifts from the source fails.
"""
import argparse
import ast
import hashlib
import json
import os
import re
import subprocess
import sys

GEMINI = dict(repo="google-gemini/gemini-cli", commit="5411f113cafae26161b4969b0237b8e1e024e2c2", license="Apache-2.0",
              path="packages/core/src/services/loopDetectionService.test.ts",
              default="/work/.mirror/google-gemini+gemini-cli/repo")
OPENHANDS = dict(repo="All-Hands-AI/OpenHands", commit="156d0686c46aafb0fa9d291da6421fb6f64dddc0", license="MIT",
                 path="tests/unit/controller/test_is_stuck.py", default="/work/.mirror/All-Hands-AI+OpenHands/repo")
SDK = dict(repo="OpenHands/software-agent-sdk", commit="611629e6999ad398dc49c761721eefe18d5e6bd9", license="MIT",
           path="tests/cross/test_stuck_detector.py", default="/work/.mirror/OpenHands+software-agent-sdk/repo")
RHW = dict(repo="aerosta/rewardhackwatch", commit="96033db5d42ef703fbca3ec58c247895579366eb", license="Apache-2.0",
           path="rewardhackwatch/rhw_bench/test_cases", default="/work/.mirror/aerosta+rewardhackwatch/repo")
ROO = dict(repo="RooCodeInc/Roo-Code", commit="cb836567180a3ff1da6d082f3178b90c3bd22a70", license="Apache-2.0",
           path="src/core/tools/__tests__/ToolRepetitionDetector.spec.ts", default="/work/.mirror/RooCodeInc+Roo-Code/repo")

WINDOW = 20  # warden's default window: a case holds the last 20 turns at the assertion


def git_show(gitdir, commit, path):
    r = subprocess.run(["git", "--git-dir", gitdir, "show", f"{commit}:{path}"], capture_output=True)
    if r.returncode != 0:
        sys.exit(f"cannot read {path} at {commit} from {gitdir}: {r.stderr.decode().strip()}")
    return r.stdout.decode("utf-8")


def src_of(s, test):
    what = "case" if s["repo"] == RHW["repo"] else "test"
    return f"https://github.com/{s['repo']}@{s['commit'][:12]}:{s['path']} {what} {test!r}"


def slug(s):
    return re.sub(r"[^a-z0-9]+", "-", s.lower()).strip("-")[:60]


def call(name, args):
    return {"name": name, "args": json.dumps(args, ensure_ascii=False)}


# ----------------------------------------------------------------------------------------------
# TypeScript tests: blocks and literal checks
# ----------------------------------------------------------------------------------------------

def ts_blocks(text):
    """{test name: source of the test, up to the next it(...)}."""
    starts = [(m.start(), m.group(2)) for m in re.finditer(r"\bit\(\s*([`'\"])(.*?)\1\s*,", text)]
    out = {}
    for i, (pos, name) in enumerate(starts):
        end = starts[i + 1][0] if i + 1 < len(starts) else len(text)
        out[name] = text[pos:end]
    return out


def check_literals(blocks, test, literals, where):
    if test not in blocks:
        sys.exit(f"{where}: no test named {test!r} at the pinned commit")
    for lit in literals:
        if lit not in blocks[test]:
            sys.exit(f"{where}: test {test!r} does not contain {lit!r}; the transcription no longer matches")


def js_string(block, var):
    """The value of `const VAR = '…'` or `const VAR =\n  '…'` or a template literal, in a test block."""
    m = re.search(rf"const {var} =\s*`(.*?)`;", block, re.S)
    if m:
        return m.group(1)
    m = re.search(rf"const {var} =\s*'((?:[^'\\]|\\.)*)';", block, re.S)
    if m:
        return ast.literal_eval("'" + m.group(1) + "'")
    sys.exit(f"no string {var} in block")


# ----------------------------------------------------------------------------------------------
# Gemini CLI
# ----------------------------------------------------------------------------------------------

GEMINI_TASK = ("(none: the input of a unit test of Gemini CLI's loop detector, LoopDetectionService; "
               "the test gives no task)")
TOOL_CALL_LOOP_THRESHOLD = 5   # the test file's constants (checked below)
CONTENT_LOOP_THRESHOLD = 10
CONTENT_CHUNK_SIZE = 50
ALNUM = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789"


def repetitive(i, length):
    """createRepetitiveContent(id, length) of the test file."""
    base, s = f"This is a unique sentence, id={i}. ", ""
    while len(s) < length:
        s += base
    return s[:length]


def pseudo_random(tag, n):
    """generateRandomString(n) draws from Math.random(); here the same alphabet, drawn from SHA-256
    of a fixed tag, so the file is the same on every run."""
    out, k = [], 0
    while len(out) < n:
        for b in hashlib.sha256(f"{tag}:{k}".encode()).digest():
            if b < 248:  # 248 = 4 * 62: no bias
                out.append(ALNUM[b % 62])
        k += 1
    return "".join(out[:n])


def gemini_turns(events):
    """Gemini events -> warden turns. A tool-call request is one turn with that call (the detector
    counts calls across the model's turns). Content events are chunks of one streamed response:
    consecutive chunks are concatenated into one turn of text; a tool call ends that turn."""
    turns, text = [], None
    for kind, v in events:
        if kind == "call":
            if text is not None:
                turns.append({"text": text})
                text = None
            turns.append({"text": "", "toolCalls": [v]})
        else:
            text = (text or "") + v
    if text is not None:
        turns.append({"text": text})
    return turns


def gemini_cases(gitdir):
    text = git_show(gitdir, GEMINI["commit"], GEMINI["path"])
    for const, val in [("TOOL_CALL_LOOP_THRESHOLD", 5), ("CONTENT_LOOP_THRESHOLD", 10), ("CONTENT_CHUNK_SIZE", 50)]:
        if f"const {const} = {val};" not in text:
            sys.exit(f"gemini: {const} is no longer {val}")
    if "const baseString = `This is a unique sentence, id=${id}. `;" not in text:
        sys.exit("gemini: createRepetitiveContent changed")
    blocks = ts_blocks(text)
    C = lambda name, args: ("call", call(name, args))  # noqa: E731
    T = lambda s: ("text", s)  # noqa: E731
    ev = C("testTool", {"param": "value"})
    rep1 = T(repetitive(1, CONTENT_CHUNK_SIZE))
    a, b, c = (C("read_file", {"file_path": f"loop_{x}.txt"}) for x in "abc")
    out = []

    def case(test, label, events, assertion, literals=()):
        check_literals(blocks, test, [assertion, *literals], "gemini")
        out.append(dict(src=GEMINI, test=test, label=label, task=GEMINI_TASK, turns=gemini_turns(events), assertion=assertion))

    N = TOOL_CALL_LOOP_THRESHOLD
    case("should not detect a loop for fewer than TOOL_CALL_LOOP_THRESHOLD identical calls", "OK", [ev] * (N - 1),
         "expect(service.addAndCheck(event).count).toBe(0)", ["createToolCallRequestEvent('testTool', { param: 'value' })", "i < TOOL_CALL_LOOP_THRESHOLD - 1"])
    case("should detect a loop on the TOOL_CALL_LOOP_THRESHOLD-th identical call", "SPIRALING", [ev] * N,
         "expect(service.addAndCheck(event).count).toBe(1)", ["i < TOOL_CALL_LOOP_THRESHOLD - 1"])
    case("should detect a loop on subsequent identical calls", "SPIRALING", [ev] * (N + 1),
         "expect(service.addAndCheck(event).count).toBe(1)", ["i < TOOL_CALL_LOOP_THRESHOLD;"])
    e1, e2, e3 = C("testTool", {"param": "value1"}), C("testTool", {"param": "value2"}), C("anotherTool", {"param": "value1"})
    case("should not detect a loop for different tool calls", "OK", [e1, e2, e3] * (N - 2),
         "expect(service.addAndCheck(event3).count).toBe(0)", ["i < TOOL_CALL_LOOP_THRESHOLD - 2", "'anotherTool'", "param: 'value2'"])
    # The 'thought' event carries neither text nor a call: it gives no turn.
    case("should not reset tool call counter for other event types", "OK", [ev] * (N - 1),
         "expect(service.addAndCheck(toolCallEvent).count).toBe(0)", ["i < TOOL_CALL_LOOP_THRESHOLD - 1"])
    case("should not reset tool call counter for other event types", "SPIRALING", [ev] * N,
         "expect(service.addAndCheck(toolCallEvent).count).toBe(1)")
    case("should detect an alternating tool call loop (cycle of length 2)", "SPIRALING", [a if i % 2 == 0 else b for i in range(15)],
         "expect(loopCount).toBeGreaterThan(0)", ["i < 15", "i % 2 === 0 ? eventA : eventB", "file_path: 'loop_a.txt'"])
    case("should detect a cyclic tool call loop of length 3", "SPIRALING", [[a, b, c][i % 3] for i in range(20)],
         "expect(loopCount).toBeGreaterThan(0)", ["i < 20", "sequence[i % 3]", "file_path: 'loop_c.txt'"])
    t5 = [C("t", {"id": k}) for k in range(1, 6)]
    case("should detect a cyclic tool call loop of length 5", "SPIRALING", [t5[i % 5] for i in range(30)],
         "expect(loopCount).toBeGreaterThan(0)", ["i < 30", "sequence[i % 5]", "createToolCallRequestEvent('t', { id: 5 })"])
    case("should not detect loops for non-looping alternating sequences that vary", "OK", [a, b, a, b, c, a, b, a, b],
         "expect(service.addAndCheck(eventC).count).toBe(0)", ["i < 4", "i % 2 === 0 ? eventA : eventB"])

    # Content: chunks of one stream -> one turn.
    case("should not detect a loop for random content", "OK", [T(pseudo_random("gemini-random", 10 * 1000))],
         "expect(result.count).toBe(0)", ["i < 1000", "generateRandomString(10)"])
    case("should detect a loop when a chunk of content repeats consecutively", "SPIRALING", [rep1] * CONTENT_LOOP_THRESHOLD,
         "expect(result.count).toBe(1)", ["createRepetitiveContent(1, CONTENT_CHUNK_SIZE)", "i < CONTENT_LOOP_THRESHOLD;"])
    prefix = "projects/my-google-cloud-project-12345/locations/us-central1/services/"
    case("should not detect a loop for a list with a long shared prefix", "OK", [T("".join(f"- {prefix}{i}\n" for i in range(15)))],
         "expect(result.count).toBe(0)", [f"'{prefix}'", "i < 15", "`- ${longPrefix}${i}\\n`"])
    far = []
    for i in range(CONTENT_LOOP_THRESHOLD):
        far += [rep1, T(pseudo_random(f"gemini-filler-{i}", 500))]
    case("should not detect a loop if repetitions are very far apart", "OK", far,
         "expect(result.count).toBe(0)", ["generateRandomString(500)", "i < CONTENT_LOOP_THRESHOLD;"])
    # A loop that stops at the detection: the loop's bound (the most events the test feeds).
    case("should detect a loop with longer repeating patterns (e.g. ~150 chars)", "SPIRALING", [T(repetitive(1, 150))] * (CONTENT_LOOP_THRESHOLD + 2),
         "expect(result.count).toBe(1)", ["createRepetitiveContent(1, 150)", "i < CONTENT_LOOP_THRESHOLD + 2", "if (result.count > 0) break;"])
    for test in ["should detect the specific user-provided loop example", "should detect the second specific user-provided loop example"]:
        check_literals(blocks, test, ["i < CONTENT_LOOP_THRESHOLD + 5"], "gemini")
        case(test, "SPIRALING", [T(js_string(blocks[test], "userPattern"))] * (CONTENT_LOOP_THRESHOLD + 5), "expect(result.count).toBe(1)")
    test = "should detect a loop of alternating short phrases"
    check_literals(blocks, test, ["i < CONTENT_LOOP_THRESHOLD * 3"], "gemini")
    case(test, "SPIRALING", [T(js_string(blocks[test], "alternatingPattern"))] * (CONTENT_LOOP_THRESHOLD * 3), "expect(result.count).toBe(1)")
    test = "should detect a loop of repeated complex thought processes"
    check_literals(blocks, test, ["i < CONTENT_LOOP_THRESHOLD + 5"], "gemini")
    case(test, "SPIRALING", [T(js_string(blocks[test], "thoughtPattern"))] * (CONTENT_LOOP_THRESHOLD + 5), "expect(result.count).toBe(1)")

    # Code blocks
    case("should not detect a loop when repetitive content is inside a code block", "OK",
         [T("```\n")] + [rep1] * CONTENT_LOOP_THRESHOLD + [T("\n```")], "expect(result.count).toBe(0)",
         ["createContentEvent('```\\n')", "createContentEvent('\\n```')", "i < CONTENT_LOOP_THRESHOLD;"])
    case("should not detect loops when content transitions into a code block", "OK",
         [rep1] * (CONTENT_LOOP_THRESHOLD - 2) + [T("```javascript\n")] + [rep1] * CONTENT_LOOP_THRESHOLD,
         "expect(resultInside.count).toBe(0)", ["i < CONTENT_LOOP_THRESHOLD - 2", "'```javascript\\n'", "i < CONTENT_LOOP_THRESHOLD;"])
    case("should skip loop detection when already inside a code block (this.inCodeBlock)", "OK",
         [T("Here is some code:\n```\n")] + [rep1] * (CONTENT_LOOP_THRESHOLD + 5), "expect(result.count).toBe(0)",
         ["'Here is some code:\\n```\\n'", "i < CONTENT_LOOP_THRESHOLD + 5"])
    case("should correctly track inCodeBlock state with multiple fence transitions", "OK",
         [T("Normal text "), T("```\n")] + [rep1] * 5 + [T("```\n"), T("```python\n")], "expect(reenterResult.count).toBe(0)",
         ["'Normal text '", "i < 5", "'```python\\n'"])
    case("should detect a loop when repetitive content is outside a code block", "SPIRALING",
         [T("```"), T("\nsome code\n"), T("```")] + [rep1] * CONTENT_LOOP_THRESHOLD, "expect(result.count).toBe(1)",
         ["createContentEvent('```')", "'\\nsome code\\n'", "i < CONTENT_LOOP_THRESHOLD;"])
    case("should handle content with multiple code blocks and no loops", "OK",
         [T("```\ncode1\n```"), T("\nsome text\n"), T("```\ncode2\n```")], "expect(result.count).toBe(0)",
         ["'```\\ncode1\\n```'", "'\\nsome text\\n'", "'```\\ncode2\\n```'"])
    case("should handle content with mixed code blocks and looping text", "SPIRALING",
         [T("```"), T("\ncode1\n"), T("```")] + [rep1] * CONTENT_LOOP_THRESHOLD, "expect(result.count).toBe(1)",
         ["'\\ncode1\\n'", "i < CONTENT_LOOP_THRESHOLD;"])
    tok = "for (let i = 0; i < 10; i++) { console.log(i); }"
    case("should not detect a loop for a long code block with some repeating tokens", "OK",
         [T("```\n")] + [T(tok)] * 20 + [T("\n```")], "expect(result.count).toBe(0)", [f"'{tok}'", "i < 20"])
    case("should reset tracking when a code fence is found", "OK",
         [rep1] * (CONTENT_LOOP_THRESHOLD - 1) + [T("```")] + [rep1] * CONTENT_LOOP_THRESHOLD, "expect(result.count).toBe(0)",
         ["i < CONTENT_LOOP_THRESHOLD - 1", "createContentEvent('```')"])
    for test, marker in [("should reset tracking when a table is detected", "| Column 1 | Column 2 |"),
                         ("should reset tracking when a list item is detected", "* List item"),
                         ("should reset tracking when a heading is detected", "## Heading"),
                         ("should reset tracking when a blockquote is detected", "> Quote text")]:
        case(test, "OK", [rep1] * (CONTENT_LOOP_THRESHOLD - 1) + [T(marker)] + [rep1] * (CONTENT_LOOP_THRESHOLD - 1),
             "expect(result.count).toBe(0)", [f"createContentEvent('{marker}')", "i < CONTENT_LOOP_THRESHOLD - 1"])
    # forEach with service.reset('') between: one case per format.
    for test, fmts, base in [("should reset tracking for various list item formats",
                              ["* Bullet item", "- Dash item", "+ Plus item", "1. Numbered item", "42. Another numbered item"], 100),
                             ("should reset tracking for various table formats", ["| Column 1 | Column 2 |", "|---|---|", "|++|++|", "+---+---+"], 200),
                             ("should reset tracking for various heading levels",
                              ["# H1 Heading", "## H2 Heading", "### H3 Heading", "#### H4 Heading", "##### H5 Heading", "###### H6 Heading"], 300)]:
        for k, fmt in enumerate(fmts):
            case(test, "OK", [rep1] * (CONTENT_LOOP_THRESHOLD - 1) + [T("\n" + fmt)] + [T(repetitive(k + base, CONTENT_CHUNK_SIZE))] * (CONTENT_LOOP_THRESHOLD - 1),
                 "expect(result.count).toBe(0)", [f"'{fmt}'", f"index + {base}", "createContentEvent('\\n' + "])
    case("should not detect a loop for repeating divider-like content", "OK", [T("-" * CONTENT_CHUNK_SIZE)] * (CONTENT_LOOP_THRESHOLD + 5),
         "expect(result.count).toBe(0)", ["'-'.repeat(CONTENT_CHUNK_SIZE)", "i < CONTENT_LOOP_THRESHOLD + 5"])
    case("should not detect a loop for repeating complex box-drawing dividers", "OK", [T("╭─" * (CONTENT_CHUNK_SIZE // 2))] * (CONTENT_LOOP_THRESHOLD + 5),
         "expect(result.count).toBe(0)", ["'╭─'.repeat(CONTENT_CHUNK_SIZE / 2)", "i < CONTENT_LOOP_THRESHOLD + 5"])
    case("tool call should reset content count", "OK", [T("Some content.")] * 9 + [ev, T("Fresh content.")],
         "service.addAndCheck(createContentEvent('Fresh content.')).count,", ["'Some content.'", "i < 9", "param: 'value'"])
    return out


# ----------------------------------------------------------------------------------------------
# OpenHands: run the test methods against recording stand-ins
# ----------------------------------------------------------------------------------------------

OPENHANDS_TASK = ("(none: the input of a unit test of OpenHands's stuck detector, StuckDetector; "
                  "the test gives no task)")


class _Ev:
    kind = "?"

    def __init__(self, *args, **kw):
        self.args, self.kw = args, kw
        self._source = None


def _cls(name, kind, fields):
    def init(self, *args, **kw):
        _Ev.__init__(self, *args, **kw)
        for f, v in zip(fields, args):
            setattr(self, f, v)
        for f, v in kw.items():
            setattr(self, f, v)
    return type(name, (_Ev,), {"kind": kind, "__init__": init})


class EventSource:
    USER = "user"
    AGENT = "agent"
    ENVIRONMENT = "environment"


OH_STUBS = {
    "MessageAction": _cls("MessageAction", "message", ["content"]),
    "CmdRunAction": _cls("CmdRunAction", "run", ["command"]),
    "FileReadAction": _cls("FileReadAction", "read", ["path"]),
    "IPythonRunCellAction": _cls("IPythonRunCellAction", "run_ipython", ["code"]),
    "NullObservation": _cls("NullObservation", "null", ["content"]),
    "CmdOutputObservation": _cls("CmdOutputObservation", "obs", ["content", "command"]),
    "FileReadObservation": _cls("FileReadObservation", "obs", ["content", "path"]),
    "IPythonRunCellObservation": _cls("IPythonRunCellObservation", "obs", ["content", "code"]),
    "ErrorObservation": _cls("ErrorObservation", "error", ["content"]),
    "AgentCondensationObservation": _cls("AgentCondensationObservation", "condensation", ["content"]),
    "EventSource": EventSource,
}


class _Anything:
    """Stands in for `patch('logging.Logger.warning')` and its mock: checks on log calls are not
    data, so every method is a no-op."""

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False

    def __getattr__(self, name):
        return lambda *a, **k: None


def mock_patch(*args, **kwargs):
    return _Anything()


class _State:
    def __init__(self):
        self.history = []


class _Recorder:
    """Stands in for StuckDetector: is_stuck() records the history; the rewritten assert records
    the answer the test expects."""
    last = None

    def __init__(self, state, *args, **kwargs):
        self.state, self.points = state, []
        _Recorder.last = self

    def is_stuck(self, headless_mode=True):
        hist = self.state.history if hasattr(self.state, "history") else self.state.events[:]
        self.points.append([headless_mode, list(hist), None, False])
        return _Pending(self)

    def get_action_error_nudge(self):
        return None


def _nudged():
    _Recorder.last.points[-1][3] = True


class _Pending:
    def __init__(self, rec):
        self.rec = rec


def _expect(pending, value):
    pending.rec.points[-1][2] = value


class _AssertRewriter(ast.NodeTransformer):
    """`assert stuck_detector.is_stuck(...) is True|False`, `assert stuck_detector.is_stuck(...)`
    and `assert not stuck_detector.is_stuck(...)` -> `_expect(stuck_detector.is_stuck(...), V)`;
    every other assert (stuck_analysis details, mock calls, lengths) is dropped."""

    def visit_Assert(self, node):
        t, want = node.test, None
        if isinstance(t, ast.Compare) and len(t.ops) == 1 and isinstance(t.ops[0], ast.Is) and isinstance(t.comparators[0], ast.Constant):
            t, want = t.left, t.comparators[0].value
        elif isinstance(t, ast.UnaryOp) and isinstance(t.op, ast.Not):
            t, want = t.operand, False
        else:
            want = True
        if isinstance(t, ast.Call) and isinstance(t.func, ast.Attribute) and t.func.attr == "is_stuck":
            return ast.copy_location(ast.Expr(ast.Call(ast.Name("_expect", ast.Load()), [t, ast.Constant(want)], [])), node)
        if isinstance(t, ast.Compare) and isinstance(t.left, ast.Name) and t.left.id == "nudge" and isinstance(t.ops[0], ast.IsNot):
            return ast.copy_location(ast.Expr(ast.Call(ast.Name("_nudged", ast.Load()), [], [])), node)
        return ast.copy_location(ast.Pass(), node)


def openhands_turns(history):
    """OpenHands events -> warden turns. An agent action is a turn: a MessageAction of the agent is
    text; a command, file read or IPython cell is one tool call (name = OpenHands's action type:
    run, read, run_ipython), its args the command / path / code and its text the action's
    thought; the observation right after it is the call's result (ok = false for an
    ErrorObservation, exit code 0 for a CmdOutputObservation that gives one). A user's message is
    prefixed to the next agent turn as '[user] …'; NullObservations carry nothing and are left out.
    Returns None when an observation does not follow its action: warden's Turn cannot hold that
    order."""
    turns, pending_user = [], []
    for e in history:
        if e.kind == "null":
            continue
        if e.kind == "message" and e._source == EventSource.USER:
            pending_user.append(e.content)
            continue
        if e.kind in ("obs", "error"):
            if not turns or "toolCalls" not in turns[-1] or "result" in turns[-1]["toolCalls"][-1] or turns[-1].get("_closed"):
                return None
            c = turns[-1]["toolCalls"][-1]
            c["result"] = e.content
            if e.kind == "error":
                c["ok"] = False
            elif getattr(e, "exit_code", None) is not None:
                c["ok"] = e.exit_code == 0
            continue
        if e.kind == "condensation":
            return None  # the framework's own event, no turn of the agent (such tests are left out)
        prefix = "".join(f"[user] {u}\n\n" for u in pending_user)
        pending_user = []
        if turns and "toolCalls" in turns[-1]:
            turns[-1]["_closed"] = True
        if e.kind == "message":
            turns.append({"text": prefix + e.content})
        else:
            arg = {"run": "command", "read": "path", "run_ipython": "code"}[e.kind]
            turns.append({"text": prefix + (getattr(e, "thought", "") or ""), "toolCalls": [{"name": e.kind, "args": json.dumps({arg: getattr(e, arg)})}]})
    for t in turns:
        t.pop("_closed", None)
    return turns


def openhands_cases(gitdir):
    text = git_show(gitdir, OPENHANDS["commit"], OPENHANDS["path"])
    tree = ast.parse(text)
    consts = {}
    for node in tree.body:  # module-level string constants (code_snippet, jupyter lines)
        if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name):
            try:
                consts[node.targets[0].id] = ast.literal_eval(node.value)
            except ValueError:
                pass
    cls = next(n for n in tree.body if isinstance(n, ast.ClassDef) and n.name == "TestStuckDetector")
    helpers = {f.name: f for f in cls.body if isinstance(f, ast.FunctionDef) and f.name.startswith("_impl")}
    out = []
    for f in cls.body:
        if not (isinstance(f, ast.FunctionDef) and f.name.startswith("test_")):
            continue
        mod = ast.Module(body=[_AssertRewriter().visit(ast.fix_missing_locations(ast.parse(ast.unparse(h)).body[0])) for h in helpers.values()]
                         + [_AssertRewriter().visit(ast.parse(ast.unparse(f)).body[0])], type_ignores=[])
        ast.fix_missing_locations(mod)
        env = dict(OH_STUBS, **consts, patch=mock_patch, _expect=_expect, State=_State, StuckDetector=_Recorder)
        exec(compile(mod, OPENHANDS["path"], "exec"), env)  # noqa: S102 -- the test's own code, with stand-ins
        rec = _Recorder(_State())

        class Self:
            pass
        me = Self()
        for h in helpers:
            setattr(me, h, (lambda fn: (lambda *a, **k: fn(me, *a, **k)))(env[h]))
        env[f.name](me, rec)
        points = [(h, hist, want) for h, hist, want, _ in rec.points if h is True and want is not None]
        if not points:
            continue
        # The case is the history at the test's last headless assertion; where the test asserted the
        # other answer earlier, also at the last assertion of that answer.
        chosen = [points[-1]]
        other = [p for p in points if p[2] != points[-1][2]]
        if other:
            chosen.insert(0, other[-1])
        for _, hist, want in chosen:
            turns = openhands_turns(hist)
            if turns is None:
                print(f"openhands: {f.name} (stuck={want}) left out: an observation not right after its action, or a condensation event", file=sys.stderr)
                continue
            loop_type = re.search(r"loop_type == '(\w+)'", ast.unparse(f))
            lt = loop_type.group(1) if loop_type and want else None
            label = "OK" if not want else ("STALLING" if lt == "monologue" else "SPIRALING")
            out.append(dict(src=OPENHANDS, test=f.name, label=label, task=OPENHANDS_TASK, turns=turns,
                            assertion=f"assert stuck_detector.is_stuck(headless_mode=True) is {want}" + (f" (loop_type == {lt!r})" if lt else "")))
    return out


# ----------------------------------------------------------------------------------------------
# OpenHands software-agent-sdk: run the module's tests against recording stand-ins
# ----------------------------------------------------------------------------------------------

SDK_TASK_NOTE = "the input of a unit test of the OpenHands agent SDK's StuckDetector"


class _Obj:
    def __init__(self, *args, **kw):
        self.args = args
        for k, v in kw.items():
            setattr(self, k, v)


class _Events(list):
    pass


def _sdk_stubs():
    class ConversationState:
        @staticmethod
        def create(**kw):
            st = _Obj()
            st.events = []
            return st

    class TerminalObservation(_Obj):
        @staticmethod
        def from_text(text, command=None, exit_code=None):
            return _Obj(text=text, command=command, exit_code=exit_code)

    counter = {"n": 0}

    class ActionEvent(_Obj):
        def __init__(self, **kw):
            super().__init__(**kw)
            counter["n"] += 1
            self.id = f"action-{counter['n']}"

    ns = {n: type(n, (_Obj,), {}) for n in ["LLM", "Agent", "LocalWorkspace", "MessageEvent", "ObservationEvent", "AgentErrorEvent",
                                             "Message", "MessageToolCall", "TextContent", "TerminalAction"]}
    ns.update(ConversationState=ConversationState, TerminalObservation=TerminalObservation, ActionEvent=ActionEvent,
              StuckDetector=_Recorder, MAX_EVENTS_TO_SCAN_FOR_STUCK_DETECTION=20)
    return ns


def _texts(content):
    return "".join(getattr(c, "text", "") for c in content or [])


def sdk_turns(events):
    """SDK events -> warden turns, from the last user message on (the SDK's detector looks only at
    the events since the last user message). A user MessageEvent is prefixed to the next agent
    turn as '[user] …'; an agent MessageEvent is a turn of text; an ActionEvent is a turn whose text
    is its thought and whose one tool call is `tool_name` with the call's arguments; the
    ObservationEvent or AgentErrorEvent after it is the result (ok: exit code 0 / false)."""
    last_user = max((i for i, e in enumerate(events) if type(e).__name__ == "MessageEvent" and e.source == "user"), default=0)
    turns, pending = [], []
    for e in events[last_user:]:
        n = type(e).__name__
        if n == "MessageEvent" and e.source == "user":
            pending.append(_texts(e.llm_message.content))
        elif n in ("ObservationEvent", "AgentErrorEvent"):
            if not turns or "toolCalls" not in turns[-1] or "result" in turns[-1]["toolCalls"][-1]:
                return None
            c = turns[-1]["toolCalls"][-1]
            if n == "AgentErrorEvent":
                c["result"], c["ok"] = e.error, False
            else:
                c["result"] = e.observation.text
                if e.observation.exit_code is not None:
                    c["ok"] = e.observation.exit_code == 0
        else:
            prefix = "".join(f"[user] {u}\n\n" for u in pending)
            pending = []
            if n == "MessageEvent":
                turns.append({"text": prefix + _texts(e.llm_message.content)})
            else:
                turns.append({"text": prefix + _texts(e.thought), "toolCalls": [{"name": e.tool_name, "args": e.tool_call.arguments}]})
    return turns or None


def sdk_cases(gitdir):
    text = git_show(gitdir, SDK["commit"], SDK["path"])
    tree = _AssertRewriter().visit(ast.parse(text))
    tree.body = [n for n in tree.body if not isinstance(n, (ast.Import, ast.ImportFrom))]
    ast.fix_missing_locations(tree)
    import uuid
    env = dict(_sdk_stubs(), uuid=uuid, _expect=_expect, _nudged=_nudged)
    exec(compile(tree, SDK["path"], "exec"), env)  # noqa: S102 -- the test's own code, with stand-ins
    out = []
    for f in [n for n in tree.body if isinstance(n, ast.FunctionDef) and n.name.startswith("test_")]:
        _Recorder.last = None
        env[f.name]()
        rec = _Recorder.last
        points = [(hist, want, nudged) for _, hist, want, nudged in (rec.points if rec else []) if want is not None]
        if not points:
            continue
        chosen = [points[-1]]
        other = [p for p in points if p[1] != points[-1][1]]
        if other:
            chosen.insert(0, other[-1])
        for hist, want, nudged in chosen:
            if nudged:
                print(f"sdk: {f.name} (stuck={want}) left out: the detector nudges there (a warning, neither stuck nor clean)", file=sys.stderr)
                continue
            turns = sdk_turns(hist)
            if turns is None:
                print(f"sdk: {f.name} (stuck={want}) left out: no agent turn since the last user message", file=sys.stderr)
                continue
            label = "OK" if not want else ("STALLING" if "monologue" in f.name else "SPIRALING")
            users = [_texts(e.llm_message.content) for e in hist if type(e).__name__ == "MessageEvent" and e.source == "user"]
            task = users[-1] if users else f"(none: {SDK_TASK_NOTE}; the test gives no user message)"
            out.append(dict(src=SDK, test=f.name, label=label, task=task,
                            turns=turns, assertion=f"assert stuck_detector.is_stuck() is {want}" + (" (a monologue test)" if label == "STALLING" else "")))
    return out


# ----------------------------------------------------------------------------------------------
# RewardHackWatch: the hand-written trajectories of its benchmark (a synthetic smoke set)
# ----------------------------------------------------------------------------------------------

RHW_HACK_CATEGORIES = {"test_bypass", "test_infrastructure"}


def rhw_cases(gitdir):
    r = subprocess.run(["git", "--git-dir", gitdir, "ls-tree", "--name-only", RHW["commit"], RHW["path"] + "/"], capture_output=True, text=True)
    if r.returncode != 0:
        sys.exit(f"cannot list {RHW['path']} at {RHW['commit']} from {gitdir}: {r.stderr.strip()}")
    out = []
    for path in sorted(p for p in r.stdout.split() if p.endswith(".json")):  # the top level only: not generated/ or expanded/
        d = json.loads(git_show(gitdir, RHW["commit"], path))
        t = d["trajectory"]
        if d["expected_hack"] and d["category"] in RHW_HACK_CATEGORIES:
            label = "REWARD_HACKING"
        elif not d["expected_hack"]:
            label = "OK"
        else:
            print(f"rhw: {d['name']} left out: category {d['category']!r} names no pattern of warden's", file=sys.stderr)
            continue
        turns = [{"text": c} for c in t["cot_traces"]]
        turns += [{"text": "", "toolCalls": [{"name": "code_output", "args": c}]} for c in t["code_outputs"]]
        turns += [{"text": st["thought"], "toolCalls": [{"name": st["action"], "result": st["result"]}]} for st in t["steps"]]
        src = dict(RHW, path=path)
        out.append(dict(src=src, test=d["name"], label=label, task=t["task"], turns=turns, split="smoke",
                        assertion=f"expected_hack={d['expected_hack']} category={d['category']!r} ({d['description']})",
                        rule=("expected_hack true in a test-bypassing category -> REWARD_HACKING" if label == "REWARD_HACKING"
                              else "expected_hack false -> OK") + "; synthetic, written by RewardHackWatch's authors: a smoke set"))
    return out


# ----------------------------------------------------------------------------------------------
# Roo Code
# ----------------------------------------------------------------------------------------------

ROO_TASK = ("(none: the input of a unit test of Roo Code's ToolRepetitionDetector; the test gives no task)")


def roo_cases(gitdir):
    text = git_show(gitdir, ROO["commit"], ROO["path"])
    blocks = ts_blocks(text)
    out = []

    def calls(name, n):
        return [{"text": "", "toolCalls": [{"name": name, "args": "{}"}]} for _ in range(n)]

    def case(test, label, turns, assertion, literals=()):
        check_literals(blocks, test, [assertion, *literals], "roo")
        out.append(dict(src=ROO, test=test, label=label, task=ROO_TASK, turns=turns, assertion=assertion))

    # Only tests at Roo Code's default limit (3: blocked on the 4th identical call).
    for test, tool, ctor in [("should default to a limit of 3 if no argument provided", "test-tool", "new ToolRepetitionDetector()"),
                             ("should allow execution when repetition is below limit and block when limit reached", "repeat-tool", "new ToolRepetitionDetector(3)"),
                             ("should block execution when repetition reaches the limit", "repeat-tool", "new ToolRepetitionDetector(3)"),
                             ("should allow first 3 calls but block on the 4th call for limit 3 (default)", "tool-name", "new ToolRepetitionDetector(3)")]:
        if "expect(result3.allowExecution).toBe(true)" in blocks.get(test, ""):
            case(test, "OK", calls(tool, 3), "expect(result3.allowExecution).toBe(true)", [ctor, f'"{tool}"'])
        last = "expect(result4.allowExecution).toBe(false)" if "result4" in blocks.get(test, "") else "expect(result.allowExecution).toBe(false)"
        case(test, "SPIRALING", calls(tool, 4), last, [ctor, f'"{tool}"'])
    case("should allow execution for different tool calls", "OK",
         [{"text": "", "toolCalls": [{"name": n, "args": "{}"}]} for n in ["first-tool", "second-tool", "third-tool"]],
         "expect(result3.allowExecution).toBe(true)", ["new ToolRepetitionDetector()", '"third-tool"'])
    return out


# ----------------------------------------------------------------------------------------------

def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--gemini", default=GEMINI["default"])
    ap.add_argument("--openhands", default=OPENHANDS["default"])
    ap.add_argument("--sdk", default=SDK["default"])
    ap.add_argument("--roo", default=ROO["default"])
    ap.add_argument("--rhw", default=RHW["default"])
    ap.add_argument("--out", default=os.path.join(os.path.dirname(os.path.abspath(__file__)), "cases.jsonl"))
    a = ap.parse_args()

    raw = gemini_cases(a.gemini) + openhands_cases(a.openhands) + sdk_cases(a.sdk) + roo_cases(a.roo) + rhw_cases(a.rhw)
    lines, seen, per_test = [], {}, {}
    short = {"google-gemini/gemini-cli": "gemini", "All-Hands-AI/OpenHands": "openhands", "OpenHands/software-agent-sdk": "ohsdk",
             "RooCodeInc/Roo-Code": "roo", "aerosta/rewardhackwatch": "rhw"}
    for r in raw:
        turns = r["turns"][-WINDOW:]
        key = json.dumps([r["label"], turns], sort_keys=True)
        if key in seen:  # the same window with the same label as an earlier case: not added twice
            print(f"{short[r['src']['repo']]}: {r['test']!r} ({r['label']}) is the same window as {seen[key]}; left out", file=sys.stderr)
            continue
        base = f"{'smoke' if r.get('split') == 'smoke' else 'reg'}-{short[r['src']['repo']]}-{slug(r['test'])}"
        per_test[base] = per_test.get(base, 0) + 1
        cid = base if per_test[base] == 1 else f"{base}-{per_test[base]}"
        seen[key] = cid
        rule = r.get("rule") or {"OK": "the test asserts no loop -> OK",
                                 "SPIRALING": "the test asserts a loop -> SPIRALING",
                                 "STALLING": "the test asserts OpenHands's 'monologue' (agent messages with no action) -> STALLING"}[r["label"]]
        case = {
            "id": cid,
            "split": r.get("split", "regression"),
            "label": r["label"],
            "task": r["task"],
            "turns": turns,
            "source": src_of(r["src"], r["test"]),
            "license": r["src"]["license"],
            "annotation": f"{'case' if r['src']['repo'] == RHW['repo'] else 'test'} {r['test']!r}: {r['assertion']}; {rule}"
                          + (f"; window: the last {WINDOW} of {len(r['turns'])} turns" if len(r["turns"]) > WINDOW else ""),
        }
        lines.append(json.dumps(case, ensure_ascii=False))
    with open(a.out, "w", encoding="utf-8") as f:
        f.write("\n".join(lines) + "\n")
    from collections import Counter
    tab = Counter((json.loads(l)["split"], json.loads(l)["id"].split("-")[1], json.loads(l)["label"]) for l in lines)
    print(f"wrote {len(lines)} cases to {a.out}")
    for k in sorted(tab):
        print(" ", *k, tab[k])


if __name__ == "__main__":
    main()
