#!/usr/bin/env python3
"""Writes test/cases/real/cases.jsonl: windows of REAL agent trajectories, labelled from the
annotations of people outside this project, through the written rules in README.md (same folder).

Sources (each read from a pinned commit of its public repository; see README.md):
  whowhen  ag2ai/Agents_Failure_Attribution   "Who&When"  (MIT)  failing agent, decisive step, reason
  agentrx  microsoft/AgentRx                  "AgentRx"   (MIT)  every failure step + category

Usage:
  python3 test/cases/real/convert.py [--whowhen GITDIR] [--agentrx GITDIR] [--out FILE]

GITDIR is a git directory (bare is fine) that holds the pinned commit; the defaults are the mirror
paths the converter was first run with. Files are read with `git show COMMIT:PATH`, so the output
depends only on the pinned commits. Deterministic: same inputs, same bytes.
"""
import argparse
import hashlib
import json
import os
import re
import subprocess
import sys
from collections import Counter, defaultdict

WHOWHEN = dict(repo="ag2ai/Agents_Failure_Attribution", commit="f4d2b6da464a826580e59b3a0eae15ea2d642d7c",
               license="MIT", default="/work/.mirror/ag2ai+Agents_Failure_Attribution/repo")
AGENTRX = dict(repo="microsoft/AgentRx", commit="f228165bfec60a801fd5fedd9d8ffe0f9de0c69d",
               license="MIT", default="/work/.mirror/microsoft+AgentRx/repo")

WINDOW = 20          # turns per window at most (warden's default window)
MIN_TURNS = 3        # shorter windows are dropped
FIELD_MAX = 2000     # characters per text / tool field (warden cuts at 8,000 / 4,000)
MARK = "…[cut by convert.py]"
MIN_REPEATS = 3      # AgentRx: the same annotated failure at this many steps -> SPIRALING


def cut(s, n=FIELD_MAX):
    s = s if isinstance(s, str) else json.dumps(s, ensure_ascii=False, sort_keys=True)
    return s if len(s) <= n else s[: n - len(MARK)] + MARK


def git_show(gitdir, commit, path):
    r = subprocess.run(["git", "--git-dir", gitdir, "show", f"{commit}:{path}"], capture_output=True)
    if r.returncode != 0:
        sys.exit(f"cannot read {path} at {commit} from {gitdir}: {r.stderr.decode().strip()}")
    return r.stdout.decode("utf-8")


def git_ls(gitdir, commit, folder):
    r = subprocess.run(["git", "--git-dir", gitdir, "ls-tree", "--name-only", commit, folder + "/"], capture_output=True)
    if r.returncode != 0:
        sys.exit(f"cannot list {folder} at {commit} from {gitdir}: {r.stderr.decode().strip()}")
    return sorted(r.stdout.decode().split())


# ----------------------------------------------------------------------------------------------
# Steps -> turns. Each converter returns [(turn, [source step indices])], in order.
# ----------------------------------------------------------------------------------------------

SUBAGENTS = {"WebSurfer", "FileSurfer", "ComputerTerminal", "Assistant"}


def magentic_turns(history):
    """Magentic-One: the Orchestrator is the agent; its sub-agents are its tools. One step, one turn:
    an Orchestrator step is a turn of text; a sub-agent's reply is a tool call whose args are the
    Orchestrator's last instruction to that sub-agent and whose result is the reply. The routing
    notices 'Next speaker X' are left out: Magentic-One's own code logs them (as an Orchestrator
    "thought") whenever it picks the next speaker; no model wrote them."""
    out, last_instr = [], {}
    for i, h in enumerate(history):
        role, content = h.get("role", ""), h.get("content") or ""
        if i == 0 and role == "human":
            continue  # the task
        m = re.match(r"Orchestrator \(-> (\w+)\)", role)
        if m:
            last_instr[m.group(1)] = content
            out.append(({"text": cut(f"(to {m.group(1)}) {content}")}, [i]))
        elif role == "Orchestrator (thought)" and re.fullmatch(r"Next speaker \w+", content.strip()):
            continue  # the framework's routing notice, written by Magentic-One's code, not by the model
        elif role.startswith("Orchestrator"):
            out.append(({"text": cut(content)}, [i]))
        elif role in SUBAGENTS:
            call = {"name": role, "args": cut(last_instr.get(role, "")), "result": cut(content)}
            if role == "ComputerTerminal":
                ok = exit_ok(content)
                if ok is not None:
                    call["ok"] = ok
            out.append(({"text": "", "toolCalls": [call]}, [i]))
        else:  # a later human message: shown as text
            out.append(({"text": cut(f"[{role}] {content}")}, [i]))
    return out


def exit_ok(content):
    m = re.match(r"\s*exitcode:\s*(-?\d+)", content)
    return None if not m else m.group(1) == "0"


def code_blocks(text):
    blocks = re.findall(r"```[\w+-]*\n(.*?)```", text, re.S)
    return "\n".join(b.strip() for b in blocks)


def ag2_turns(history):
    """CaptainAgent (AG2 group chat): experts talk, Computer_terminal runs the code they wrote. An
    expert's step is a turn of text; a Computer_terminal step is a tool call whose args are the
    code blocks of the message before it and whose ok is its exit code."""
    out = []
    for i, h in enumerate(history):
        name, content = h.get("name") or h.get("role") or "?", h.get("content") or ""
        if name == "Computer_terminal":
            prev = history[i - 1].get("content") or "" if i > 0 else ""
            call = {"name": "Computer_terminal", "args": cut(code_blocks(prev)), "result": cut(content)}
            ok = exit_ok(content)
            if ok is not None:
                call["ok"] = ok
            out.append(({"text": "", "toolCalls": [call]}, [i]))
        else:
            out.append(({"text": cut(f"[{name}] {content}")}, [i]))
    return out


def tau_turns(traj):
    """tau-bench retail (OpenAI messages): the assistant is the agent. An assistant message is a
    turn; its tool calls get the results of the tool messages that answer them (same step group).
    A customer message is prefixed to the next assistant turn's text as '[customer] …'."""
    out, pending_user, steps_user = [], [], []
    i = 0
    while i < len(traj):
        m = traj[i]
        if m["role"] == "system":
            i += 1
            continue
        if m["role"] == "user":
            pending_user.append(m.get("content") or "")
            steps_user.append(i)
            i += 1
            continue
        if m["role"] == "assistant":
            steps = steps_user + [i]
            text = "".join(f"[customer] {u}\n\n" for u in pending_user) + (m.get("content") or "")
            turn = {"text": cut(text)}
            calls = []
            for tc in m.get("tool_calls") or []:
                fn = tc.get("function", {})
                calls.append({"id": tc.get("id"), "name": fn.get("name", "?"), "args": cut(fn.get("arguments", ""))})
            j = i + 1
            while j < len(traj) and traj[j]["role"] == "tool":
                res = traj[j].get("content") or ""
                for c in calls:
                    if c["id"] == traj[j].get("tool_call_id") or (traj[j].get("tool_call_id") is None and "result" not in c):
                        c["result"] = cut(res)
                        c["ok"] = not res.startswith("Error")
                        break
                steps.append(j)
                j += 1
            if calls:
                turn["toolCalls"] = [{k: v for k, v in c.items() if k != "id"} for c in calls]
            out.append((turn, steps))
            pending_user, steps_user = [], []
            i = j
            continue
        i += 1
    return out


# ----------------------------------------------------------------------------------------------
# Windows
# ----------------------------------------------------------------------------------------------

def window_before(turns, first_bad):
    """The last WINDOW turns made only of steps before `first_bad` (0-based step index)."""
    ok = [(t, steps) for t, steps in turns if max(steps) < first_bad]
    return ok[-WINDOW:]


def windows_before(turns, first_bad):
    """Every OK window before `first_bad`: the stretch of turns made only of earlier steps, cut into
    consecutive WINDOW-turn pieces counted back from its end. The first piece is window_before's
    (rule 1); the earlier ones are rule 1b. A piece of fewer than MIN_TURNS is dropped by add()."""
    ok = [(t, steps) for t, steps in turns if max(steps) < first_bad]
    out = []
    end = len(ok)
    while end > 0:
        out.append(ok[max(0, end - WINDOW):end])
        end -= WINDOW
    return out


def window_from(turns, start, end=None):
    """The first WINDOW turns from the turn holding step `start` on (and not past step `end`)."""
    sel = [(t, s) for t, s in turns if max(s) >= start and (end is None or min(s) <= end)]
    return sel[:WINDOW]


# Who&When reason -> pattern (README "Mapping rules"). Case-insensitive, first match wins.
WW_RULES = [
    ("SPIRALING", re.compile(r"\brepeatedly\b|\bkeeps on the same\b|\bin a loop\b|\bover and over\b", re.I)),
    ("DRIFT", re.compile(r"\b(irrelevant|unrelated) to the (task|question|problems?|actual question)\b"
                         r"|\bcompletely irrelevant\b|\bfocused on an irrelevant\b", re.I)),
    # Rule 3b (added with the second untouched split): the same failing action "multiple times".
    ("SPIRALING", re.compile(r"\bmultiple times\b", re.I)),
]


def norm_reason(s):
    s = re.sub(r"\b(at )?step \d+,?", "", s.lower())
    return re.sub(r"\s+", " ", s).strip(" .")


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--whowhen", default=WHOWHEN["default"])
    ap.add_argument("--agentrx", default=AGENTRX["default"])
    here = os.path.dirname(os.path.abspath(__file__))
    ap.add_argument("--out", default=os.path.join(here, "cases.jsonl"))
    ap.add_argument("--splits", default=os.path.join(here, "splits.json"), help="the frozen split of each question (read; extended only with --new-questions)")
    ap.add_argument("--new-questions", choices=["dev", "untouched"], help="the side for questions not yet in --splits (default: refuse)")
    a = ap.parse_args()

    ww = lambda p: git_show(a.whowhen, WHOWHEN["commit"], p)  # noqa: E731
    rx = lambda p: git_show(a.agentrx, AGENTRX["commit"], p)  # noqa: E731
    src_ww = lambda p: f"https://github.com/{WHOWHEN['repo']}@{WHOWHEN['commit'][:12]}:{p}"  # noqa: E731
    src_rx = lambda p: f"https://github.com/{AGENTRX['repo']}@{AGENTRX['commit'][:12]}:{p}"  # noqa: E731

    windows = []  # dict(traj, label, task, turns, source, license, annotation, kind)

    def add(traj, label, task, turns, source, license, annotation, kind):
        """`turns` is [(turn, [step indices])]. A failure window that overlaps one already taken for
        the same run and label (the other source annotated the same stretch) is not added twice."""
        if len(turns) < MIN_TURNS:
            return
        span = (min(min(s) for _, s in turns), max(max(s) for _, s in turns))
        for w in windows:
            if w["traj"] == traj and w["label"] == label and w["span"][0] <= span[1] and span[0] <= w["span"][1]:
                return
        windows.append(dict(traj=traj, label=label, task=cut(task, 8000), turns=[t for t, _ in turns], span=span,
                            source=source, license=license, annotation=cut(annotation, 4000), kind=kind))

    # --- AgentRx annotations of the Magentic-One runs (the same runs as Who&When Hand-Crafted) ---
    rx_magentic = {t["trajectory_id"]: t for t in json.loads(rx("data/ground_truth/magentic_one_ground_truth.json"))}

    # --- AgentRx: repeated annotated failures in the Magentic-One runs -> SPIRALING ---
    for tid in sorted(rx_magentic):
        t = rx_magentic[tid]
        hist = json.loads(rx(f"data/magentic_dataset/{tid}.json"))
        task = hist[0]["content"] if hist and hist[0].get("role") == "human" else ""
        turns = magentic_turns(hist)
        groups = defaultdict(list)
        for f in t["failures"]:
            groups[(f["failure_category"], norm_reason(f["step_reason"]))].append(f)
        for (cat, reason), fs in sorted(groups.items(), key=lambda kv: min(f["step_number"] for f in kv[1])):
            steps = sorted({f["step_number"] - 1 for f in fs})  # 0-based
            if len(steps) < MIN_REPEATS:
                continue
            pos = 0
            while pos < len(steps):
                win = window_from(turns, steps[pos])
                if not win:
                    break
                last_step = max(max(s) for _, s in win)
                inside = [s for s in steps[pos:] if s <= last_step]
                if len(inside) < MIN_REPEATS:
                    break
                add(f"magentic-one/{tid}", "SPIRALING", task, win, src_rx(f"data/magentic_dataset/{tid}.json") + " ; annotation " +
                    src_rx("data/ground_truth/magentic_one_ground_truth.json"), AGENTRX["license"],
                    f"AgentRx: {len(steps)} failures annotated with the same category {cat!r} and reason "
                    f"{fs[0]['step_reason']!r} at steps {[s + 1 for s in steps]} (1-based) -> SPIRALING: window starts at "
                    f"step {steps[pos] + 1} and holds {len(inside)} of them", "rx-repeat")
                pos += len(inside)

    # --- Who&When ---
    for sub in ["Hand-Crafted", "Algorithm-Generated"]:
        for path in sorted(git_ls(a.whowhen, WHOWHEN["commit"], f"Who&When/{sub}"), key=lambda p: (len(p), p)):
            if not path.endswith(".json"):
                continue
            d = json.loads(ww(path))
            hist, qid, task = d["history"], d["question_ID"], d["question"]
            run = f"magentic-one/{qid}" if sub == "Hand-Crafted" else f"captainagent/{qid}"
            step = int(d["mistake_step"])  # 0-based index into history
            turns = magentic_turns(hist) if sub == "Hand-Crafted" else ag2_turns(hist)
            ann_ww = f"Who&When mistake_agent={d['mistake_agent']!r} mistake_step={step} mistake_reason={d['mistake_reason']!r}"
            # OK: before the earliest step any annotator marked (Who&When's, and AgentRx's if it annotated the run).
            first_bad, ann_ok, src_ok = step, ann_ww, src_ww(path)
            if qid in rx_magentic:
                rx_first = min(f["step_number"] for f in rx_magentic[qid]["failures"]) - 1  # AgentRx counts from 1
                if rx_first < first_bad:
                    first_bad = rx_first
                ann_ok += f"; AgentRx first failure step={rx_first + 1} (1-based)"
                src_ok += " ; annotation also " + src_rx("data/ground_truth/magentic_one_ground_truth.json")
            for k, win in enumerate(windows_before(turns, first_bad)):
                add(run, "OK", task, win, src_ok, WHOWHEN["license"],
                    ann_ok + (f" -> OK: window ends before step {first_bad} (0-based), the earliest annotated failure" if k == 0 else
                              f" -> OK (rule 1b): window {k + 1} counted back from step {first_bad} (0-based), the earliest annotated failure"),
                    "ok-before-failure" if k == 0 else "ok-earlier")
            for label, rule in WW_RULES:
                if rule.search(d["mistake_reason"]):
                    add(run, label, task, window_from(turns, step), src_ww(path), WHOWHEN["license"],
                        ann_ww + f" -> {label} (reason matches /{rule.pattern}/): window starts at the mistake step", "ww-reason")
                    break

    # --- AgentRx tau-bench retail: OK before the first annotated failure ---
    tau = {x["task_id"]: x for x in json.loads(rx("data/tau_retail/tau_dataset_failed.json"))}
    for g in sorted(json.loads(rx("data/ground_truth/tau_ground_truth.json")), key=lambda g: g["trajectory_id"]):
        x = tau.get(g["trajectory_id"])
        if x is None:
            continue
        first = min(f["step_number"] for f in g["failures"]) - 1  # AgentRx counts messages from 1
        traj = x["traj"]
        user0 = next((m.get("content") for m in traj if m["role"] == "user"), "")
        task = ("Retail customer-service agent: follow the retail agent policy and serve the customer. "
                "The customer opens with: " + (user0 or ""))
        for k, win in enumerate(windows_before(tau_turns(traj), first)):
            add(f"tau-retail/{g['trajectory_id']}", "OK", task, win,
                src_rx("data/tau_retail/tau_dataset_failed.json") + f" task_id={g['trajectory_id']} ; annotation " +
                src_rx("data/ground_truth/tau_ground_truth.json"), AGENTRX["license"],
                f"AgentRx: first annotated failure at step {first + 1} (1-based, {g['failures'][0]['failure_category']!r}) "
                + ("-> OK: window ends before it" if k == 0 else f"-> OK (rule 1b): window {k + 1} counted back from it"),
                "ok-before-failure" if k == 0 else "ok-earlier")

    # --- tau-bench retail runs that succeeded (rule 1c): OK windows over the whole run ---
    # tau_dataset_full.json holds one run of each of the 100 tasks; those with reward 1.0 were
    # judged correct by tau-bench's grader (the database ends as the task's annotated ground-truth
    # actions leave it) and carry no failure annotation.
    annotated = {g["trajectory_id"] for g in json.loads(rx("data/ground_truth/tau_ground_truth.json"))}
    for x in sorted(json.loads(rx("data/tau_retail/tau_dataset_full.json")), key=lambda x: x["task_id"]):
        if x["reward"] != 1.0 or x["task_id"] in annotated:
            continue
        traj = x["traj"]
        user0 = next((m.get("content") for m in traj if m["role"] == "user"), "")
        task = ("Retail customer-service agent: follow the retail agent policy and serve the customer. "
                "The customer opens with: " + (user0 or ""))
        turns = tau_turns(traj)
        for k, win in enumerate(windows_before(turns, len(traj))):
            add(f"tau-retail/{x['task_id']}", "OK", task, win,
                src_rx("data/tau_retail/tau_dataset_full.json") + f" task_id={x['task_id']}", AGENTRX["license"],
                f"tau-bench reward={x['reward']} (reward_info.info={json.dumps(x['info']['reward_info']['info'], sort_keys=True)}); "
                f"no failure annotated -> OK (rule 1c): window {k + 1} of the run counted back from its end", "ok-success")

    # --- Split: by trajectory, deterministic, balanced per label, fixed before any measurement ---
    # Grouped by question: Who&When ran 45 of its questions through both systems; those two runs
    # (and so every window of either) land on the same side.
    by_traj = defaultdict(list)
    for w in windows:
        by_traj[w["traj"].split("/", 1)[1] if not w["traj"].startswith("tau-retail/") else w["traj"]].append(w)
    rank = {"SPIRALING": 0, "DRIFT": 1, "STALLING": 2, "OK": 3}
    # The split of every question is frozen in splits.json (committed): a change to the converter
    # never moves a question from one side to the other. The first 123 questions were balanced
    # between `dev` and a first `untouched` split; that split was run several times and became
    # `dev` too. The questions that first gave a window in the second round (none of their runs had
    # a window before) form the second `untouched` split. A question the file does not name is
    # an error unless --new-questions says which side every such question goes to.
    frozen = {}
    if os.path.exists(a.splits):
        with open(a.splits, encoding="utf-8") as f:
            frozen = json.load(f)
    new = sorted(k for k in by_traj if k not in frozen)
    if new and a.new_questions is None:
        sys.exit(f"{len(new)} question(s) not in {a.splits} (first: {new[0]}); "
                 "say where they go with --new-questions dev|untouched")
    group_split = {k: frozen.get(k, a.new_questions) for k in by_traj}
    split_of = {w["traj"]: group_split[k] for k, ws in by_traj.items() for w in ws}
    if new:
        merged = dict(frozen, **{k: a.new_questions for k in new})
        with open(a.splits, "w", encoding="utf-8") as f:
            json.dump(dict(sorted(merged.items())), f, indent=1)
            f.write("\n")

    lines, seen = [], Counter()
    for w in sorted(windows, key=lambda w: (w["traj"], rank[w["label"]], w["source"])):
        short = hashlib.sha256(w["traj"].encode()).hexdigest()[:10]
        seen[(short, w["label"])] += 1
        case = {
            "id": f"real-{short}-{w['label'].lower()}-{seen[(short, w['label'])]}",
            "split": split_of[w["traj"]],
            "label": w["label"],
            "task": w["task"],
            "turns": w["turns"],
            "source": w["source"],
            "license": w["license"],
            "annotation": w["annotation"],
        }
        lines.append(json.dumps(case, ensure_ascii=False, sort_keys=False))
    with open(a.out, "w", encoding="utf-8") as f:
        f.write("\n".join(lines) + "\n")

    tab = Counter((json.loads(l)["split"], json.loads(l)["label"], "agentrx" if "microsoft/AgentRx" in json.loads(l)["source"].split(" ;")[0] else "whowhen") for l in lines)
    print(f"wrote {len(lines)} cases from {len({w['traj'] for w in windows})} runs ({len(by_traj)} questions) to {a.out} ({os.path.getsize(a.out)} bytes)")
    for k in sorted(tab):
        print(" ", *k, tab[k])


if __name__ == "__main__":
    main()
