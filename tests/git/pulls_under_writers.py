"""Agents adding memory in a clone while the person in it pulls, stashes and rebases.

The store writes under its own lock; git rewrites the work tree without it. This drives
both at once, through the real CLI and real git, and checks the promise that matters: an
add that was acknowledged (exit status 0) is never silently gone. At the end of a mode
each acknowledged add is either in `.metis/MEMORY.md` as a whole line, or listed by
`metis-memory recover` (the journal of acknowledged adds the hosts keep in
`.git/metis-memory/`). An add that is neither is LOST, and the run fails. So does an entry
nobody removed on purpose (a seed, a team entry) gone from the file: the journal covers
this clone's adds only.

Run by scripts/test-git:
    python3 pulls_under_writers.py CLI [--operations N] [--modes m,m] [--seed S]
                                       [--keep] [--trace] [--shared-key]

Per mode, in a fresh temporary directory (kept with --keep, and whenever the run fails):

- `origin.git` (bare); `team`, a clone standing for another person's machine, where
  `metis-memory init` is run and 20 seed entries (`- s1` ...) are committed with what
  init wrote (.gitattributes, .gitignore) and pushed; `mine`, cloned after that, init run
  in it. git runs sandboxed (no system or global config, fixed identities, LC_ALL=C);
  the compiled-component cache is under the temporary directory; the CLI is a copy
  (bin/, first on PATH), so a rebuild of target/ during the run changes nothing.
- Two agents (threads), each running `metis-memory --workspace mine --json add MEMORY.md
  "- A17"` (B for the other; the number counts up) as one process per add, 50-300 ms
  apart. Exit 0 is an acknowledged add; exit 1 a refusal, counted by its reason (the
  error's kind, and what git is doing when git is the reason); any other exit status is a
  harness failure. Each entry's first word is its own: the merge driver names an entry by
  its first word (or what precedes a colon) and takes a new line of the same name on
  both sides as two edits of one entry, a conflict of the whole file; --shared-key uses
  `- agent A 17` (and `- team n`, `- seed n`) to drive that case.
- The team (a thread): every 0.3-1 s appends `- T n` to its own file (a plain write: it
  is another machine), commits and pushes; a rejected push is followed by `git pull
  --no-rebase --no-edit` and another push.
- The person in `mine` (a thread): N operations (--operations, default 25), 0.2-0.8 s
  apart. Before about 40% of them the memory file is committed (`git add .metis/MEMORY.md
  && git commit`, when it changed) and pushed (a rejected push is counted; the next pull
  brings the branches together). The operation is the mode's:
    merge             git pull --no-rebase --no-edit
    autostash         git pull --no-rebase --autostash --no-edit
    stash-pop         git stash; git pull --no-rebase --no-edit; git stash pop
    rebase-autostash  git pull --rebase --autostash
    sync              metis-memory sync (it commits, fetches, merges and pushes itself,
                      under the store's write hold): held to more, nothing may even be
                      listed by recover
  A command that fails is counted by its reason and the person carries on.
- Budgets (150 adds per agent, 80 team entries) keep the file under its 4096-byte hard
  cap whatever --operations or a slow machine make of the run; a default run makes about
  half as many.

How the person deals with what git leaves behind (judgement calls, made to avoid every
command that discards work-tree content):

- A merge or rebase stopped on a conflict: each conflicted file is rewritten as the union
  of its lines (the work tree's, markers dropped, and the index's stages 2 and 3), first
  occurrence kept, then `git add`, and `git commit --no-edit` / `git rebase --continue`.
  While git is stopped the store refuses agents' writes, so this plain write races no
  agent. A rebase whose pick was refused because the work tree changed (an add that
  landed before git's marker appeared): `git stash`, `git rebase --continue`, and the
  stash popped after. A rebase git left broken (it died starting, "could not reset
  --hard", leaving .git/rebase-merge holding only its autostash, which neither --continue
  nor --abort can end): `git rebase --quit`, which keeps HEAD, the index and the work
  tree and moves the autostash to the stash list. Only if all that fails six times:
  `git rebase --abort` / `git merge --abort` (or `git rebase --skip` for a pick left
  empty): a discarding command, whose time window (from the start of the operation that
  stopped to the end of the abort) is recorded; an add acknowledged in that window is
  reported as "touched by a discarding command" instead of lost.
- `git stash pop` refused because agents wrote to the file meanwhile ("local changes
  would be overwritten"): the person commits the memory file and pops again (up to three
  times): the pop is then a merge through the entry driver. A pop that conflicts (the
  stash kept, markers in the file, and no marker of git's that stops the agents): the
  file is resolved to the union as above but written with `metis-memory consolidate
  --expect-hash` (retried when an agent wrote meanwhile), so no agent's add is
  overwritten; then `git add` and `git stash drop` (the stash's side is in the union).
- A stash left over (an autostash that could not be applied, a pop that never went
  through) is popped the same way after the operation, and at the end.

At the end of a mode: the person finishes, then the agents and the team are stopped and
joined (no sleep synchronises anyone: the pauses are the workload). In `mine`: what is
stopped is finished and stashes popped as above; stashes left are counted; `git status`;
the file is read and `recover --json` run. Figures: acknowledged adds, refusals, pulls and
their failures; LOST (acknowledged, not in the file, not listed); "listed by recover"
(acknowledged, not in the file, listed: undone by git, put back by `recover --add`);
seeds missing. Then `recover --add` is run and every acknowledged add must be in the
file; the file is committed, a final `git pull` made, and every seed and every team entry
that was pushed must be in mine's file (unless a discarding command ran), and every
acknowledged add still.

Each mode's log.txt has every command run, with its start and end (seconds since the
time in its first line) and its output. --trace also runs mine's git commands and every
metis-memory process under strace (-ttt: the epoch's seconds, as the log's start time
is), one file per process in strace/, which is how a loss is pinned to a syscall.

Exit status 1 when an acknowledged add is lost, a seed or team entry is destroyed, an end
check fails, or the harness itself hit an unexpected error. The last line printed is the
summary: "git: ...".
"""

from __future__ import annotations

import argparse
import collections
import hashlib
import json
import os
import random
import re
import shutil
import subprocess
import sys
import tempfile
import threading
import time
import traceback
from dataclasses import dataclass, field
from pathlib import Path

MODES = ["merge", "autostash", "stash-pop", "rebase-autostash", "sync"]
MEMORY = ".metis/MEMORY.md"
SEEDS = 20
AGENTS = ["A", "B"]
# The most adds per agent and entries of the team's in a mode: with the seeds, at most
# about 2.7 KB, under the memory file's hard cap (4096 bytes), whatever --operations or a
# slow machine make of the run (a default run makes about half as many).
AGENT_BUDGET = 150
TEAM_BUDGET = 80
TIMEOUT = 120
MARKER_PREFIXES = ("<<<<<<<", "|||||||", "=======", ">>>>>>>")


class HarnessError(Exception):
    pass


@dataclass
class Add:
    entry: str
    started: float  # monotonic
    ended: float  # monotonic


@dataclass
class Figures:
    mode: str
    acknowledged: list[Add] = field(default_factory=list)
    refused: collections.Counter = field(default_factory=collections.Counter)
    pulls: int = 0
    pull_failures: collections.Counter = field(default_factory=collections.Counter)
    other_failures: collections.Counter = field(default_factory=collections.Counter)
    commits: int = 0
    pushes: int = 0
    push_rejected: int = 0
    stopped_resolved: int = 0
    stash_pops_retried: int = 0
    stashed_in_rebase: int = 0
    rebases_quit: int = 0
    leftover_stashes_popped: int = 0
    discarding: list[tuple[float, float, str]] = field(default_factory=list)
    team_pushed: list[str] = field(default_factory=list)
    team_pulls: int = 0
    # End of mode.
    stash_left: int = 0
    status: str = ""
    lost: list[str] = field(default_factory=list)
    listed: list[str] = field(default_factory=list)
    touched: list[str] = field(default_factory=list)
    recover_total: int = 0
    not_restored: list[str] = field(default_factory=list)
    team_missing: list[str] = field(default_factory=list)
    # The seeds are never removed on purpose: gone from the file is destroyed.
    seeds_missing: list[str] = field(default_factory=list)
    seeds_missing_after: list[str] = field(default_factory=list)
    lost_in_sync: list[str] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)
    seconds: float = 0.0


def sandboxed_env(top: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items()
           if not k.startswith("GIT_") and k not in ("METIS_WORKSPACE", "VISUAL", "EDITOR")}
    env.update(
        # The CLI copied to top/bin is the metis-memory on PATH, for the hooks and the
        # merge driver init sets up, whichever way init names it.
        PATH=f"{top / 'bin'}{os.pathsep}{os.environ.get('PATH', '')}",
        GIT_CONFIG_NOSYSTEM="1",
        GIT_CONFIG_GLOBAL="/dev/null",
        GIT_AUTHOR_NAME="test",
        GIT_AUTHOR_EMAIL="test@example.com",
        GIT_COMMITTER_NAME="test",
        GIT_COMMITTER_EMAIL="test@example.com",
        GIT_TERMINAL_PROMPT="0",
        GIT_EDITOR="true",
        GIT_MERGE_AUTOEDIT="no",
        LC_ALL="C",
        LANG="C",
        METIS_MEMORY_CACHE_DIR=str(top / "cache"),
    )
    return env


def lines_of(text: str) -> set[str]:
    return set(text.splitlines())


def first_line(text: str) -> str:
    for line in text.splitlines():
        if line.strip():
            return line.strip()
    return ""


def git_failure_reason(out: str) -> str:
    """A short, stable name for why a git command failed (file names left out)."""
    known = [
        ("would be overwritten", "local changes would be overwritten"),
        ("CONFLICT", "conflict"),
        ("unmerged files", "unmerged files"),
        ("resulted in conflicts", "autostash apply conflicts"),
        ("Your index contains uncommitted changes", "index has uncommitted changes"),
        ("cannot pull with rebase", "cannot pull with rebase"),
        ("index.lock", "index.lock exists"),
        ("rejected", "push rejected"),
        ("divergent", "divergent branches"),
        ("Not possible to fast-forward", "not possible to fast-forward"),
        ("not under version control", "nothing to merge"),
    ]
    if "unable to create file" in out:
        # git unlinked the file to write its version, and found one there when it went
        # to create it: a writer created the file in between (and git gave up).
        return "git could not write the file back: File exists"
    if out.count("would be overwritten by merge") > 1 and "strategy" in out:
        # git merge put the local changes aside (stash create), failed, reset the work
        # tree and could not apply them again: they are only in a dangling commit.
        return "local changes would be overwritten, and putting them back failed"
    for needle, name in known:
        if needle in out:
            return name
    for line in out.splitlines():
        if line.startswith(("error:", "fatal:")):
            return line[:70]
    return first_line(out)[:70] or "(no output)"


class Mode:
    def __init__(self, cli: str, mode: str, tmp: Path, operations: int, rng: random.Random,
                 shared_key: bool, trace: bool = False):
        self.cli = cli
        self.shared_key = shared_key
        self.mode = mode
        self.tmp = tmp
        self.operations = operations
        self.rng = rng
        self.env = sandboxed_env(tmp.parent)
        self.origin = tmp / "origin.git"
        self.team = tmp / "team"
        self.mine = tmp / "mine"
        self.fig = Figures(mode)
        self.lock = threading.Lock()
        self.stop = threading.Event()
        self.began = time.time()
        tmp.mkdir(parents=True)
        self.log_file = open(tmp / "log.txt", "w")
        self.log_file.write(f"times in seconds since {self.began:.6f} (the epoch's)\n")
        self.trace = trace
        self.traced = 0
        if trace:
            (tmp / "strace").mkdir()

    # --- running things -------------------------------------------------------------

    def run(self, args: list[str], cwd: Path | None = None, stdin: str | None = None,
            env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
        started = time.time()
        traced = args
        if self.trace and (cwd == self.mine or self.cli == args[0]):
            # strace's -ttt times are the epoch's, as the log's are.
            with self.lock:
                self.traced += 1
                name = f"{self.traced:05d}-{threading.current_thread().name}"
            traced = ["strace", "-f", "-ttt", "-qq", "-o", str(self.tmp / "strace" / name),
                      "-e", "trace=%file,rename,renameat,renameat2,write,execve", *args]
        out = subprocess.run(traced, cwd=cwd or self.tmp, input=stdin, capture_output=True,
                             text=True, env=env or self.env, timeout=TIMEOUT,
                             stdin=None if stdin is not None else subprocess.DEVNULL)
        self.log(started, args, cwd, out)
        return out

    def log(self, started: float, args: list[str], cwd: Path | None,
            out: subprocess.CompletedProcess[str]) -> None:
        """Every command, with its times and output, in the mode's log.txt (kept with
        --keep or on failure): what to read when something is lost."""
        shown = " ".join("CLI" if a == self.cli else a for a in args
                         if a != str(self.mine) and a != "--workspace")
        said = (out.stdout + out.stderr).strip().replace("\n", "\n        ")
        line = (f"{started - self.began:8.3f} {time.time() - self.began:8.3f} "
                f"{threading.current_thread().name:8} [{cwd.name if cwd else '-'}] "
                f"{shown} -> {out.returncode}" + (f"\n        {said}" if said else "") + "\n")
        with self.lock:
            self.log_file.write(line)

    def git(self, repo: Path, *args: str) -> subprocess.CompletedProcess[str]:
        return self.run(["git", *args], cwd=repo)

    def ok(self, repo: Path, *args: str) -> str:
        out = self.git(repo, *args)
        if out.returncode != 0:
            raise HarnessError(f"git {' '.join(args)} in {repo.name}: exit {out.returncode}\n"
                               f"{out.stdout}{out.stderr}")
        return out.stdout

    def metis(self, repo: Path, *args: str, stdin: str | None = None
              ) -> subprocess.CompletedProcess[str]:
        return self.run([self.cli, "--workspace", str(repo), *args], stdin=stdin)

    def metis_ok(self, repo: Path, *args: str) -> str:
        out = self.metis(repo, *args)
        if out.returncode != 0:
            raise HarnessError(f"metis-memory {' '.join(args)} in {repo.name}: exit "
                               f"{out.returncode}\n{out.stdout}{out.stderr}")
        return out.stdout

    def note_failure(self, what: str, out: subprocess.CompletedProcess[str]) -> None:
        with self.lock:
            self.fig.other_failures[f"{what}: {git_failure_reason(out.stdout + out.stderr)}"] += 1

    # --- set-up ---------------------------------------------------------------------

    def set_up(self) -> None:
        self.ok(self.tmp, "init", "-q", "--bare", "-b", "main", str(self.origin))
        self.ok(self.tmp, "clone", "-q", str(self.origin), str(self.team))
        self.metis_ok(self.team, "init")
        (self.team / ".metis").mkdir(exist_ok=True)
        (self.team / MEMORY).write_text("".join(self.entry("s", n) + "\n"
                                                for n in range(1, SEEDS + 1)))
        self.ok(self.team, "add", ".gitattributes", ".gitignore", MEMORY)
        self.ok(self.team, "commit", "-q", "-m", "seed memory")
        self.ok(self.team, "push", "-q", "-u", "origin", "main")
        self.ok(self.tmp, "clone", "-q", str(self.origin), str(self.mine))
        self.metis_ok(self.mine, "init")
        dirty = self.ok(self.mine, "status", "--porcelain")
        if dirty.strip():
            raise HarnessError(f"init left the clone dirty:\n{dirty}")

    def entry(self, who: str, n: int) -> str:
        """A unique entry. The merge driver names an entry by its first word (or what
        precedes a colon) and takes a new line of the same name as an edit of it: by
        default each entry's first word is its own (`- A17`), so that adds are adds; with
        --shared-key every agent entry starts with the same word (`- agent A 17`)."""
        if self.shared_key:
            return {"s": f"- seed {n}", "T": f"- team {n}"}.get(who, f"- agent {who} {n}")
        return f"- {who}{n}"

    # --- the agents -----------------------------------------------------------------

    def agent(self, name: str, rng: random.Random) -> None:
        k = 0
        while not self.stop.wait(rng.uniform(0.05, 0.3)):
            if k == AGENT_BUDGET:
                continue
            k += 1
            entry = self.entry(name, k)
            started = time.monotonic()
            out = self.metis(self.mine, "--json", "add", MEMORY.split("/")[1], entry)
            ended = time.monotonic()
            if out.returncode == 0:
                with self.lock:
                    self.fig.acknowledged.append(Add(entry, started, ended))
            elif out.returncode == 1:
                with self.lock:
                    self.fig.refused[refusal_reason(out.stdout, out.stderr)] += 1
            else:
                raise HarnessError(f"add {entry!r} exited {out.returncode}:\n"
                                   f"{out.stdout}{out.stderr}")

    # --- the team -------------------------------------------------------------------

    def team_member(self, rng: random.Random) -> None:
        committed: list[str] = []
        n = 0
        while not self.stop.wait(rng.uniform(0.3, 1.0)):
            if n == TEAM_BUDGET:
                continue
            n += 1
            entry = self.entry("T", n)
            with open(self.team / MEMORY, "a") as f:
                f.write(entry + "\n")
            self.ok(self.team, "add", MEMORY)
            self.ok(self.team, "commit", "-q", "-m", f"team {n}")
            committed.append(entry)
            for _ in range(5):
                if self.git(self.team, "push", "-q", "origin", "main").returncode == 0:
                    with self.lock:
                        self.fig.team_pushed = list(committed)
                    break
                with self.lock:
                    self.fig.team_pulls += 1
                pull = self.git(self.team, "pull", "-q", "--no-rebase", "--no-edit")
                if pull.returncode != 0:
                    self.note_failure("team pull", pull)
                    if (self.team / ".git" / "MERGE_HEAD").exists():
                        # Another machine: its own entries are committed, so an abort
                        # there discards nothing of anyone's.
                        self.ok(self.team, "merge", "--abort")
                    break

    # --- the person -----------------------------------------------------------------

    def person(self, rng: random.Random) -> None:
        for op in range(self.operations):
            time.sleep(rng.uniform(0.2, 0.8))
            started = time.monotonic()
            if self.mode == "sync":
                out = self.metis(self.mine, "sync")
                with self.lock:
                    self.fig.pulls += 1
                    if out.returncode != 0:
                        self.fig.pull_failures[git_failure_reason(out.stdout + out.stderr)] += 1
                self.settle(started)
                continue
            if rng.random() < 0.4:
                self.commit_and_push(f"mine {op}")
            if self.mode == "merge":
                self.pull("pull", "--no-rebase", "--no-edit")
            elif self.mode == "autostash":
                self.pull("pull", "--no-rebase", "--autostash", "--no-edit")
            elif self.mode == "rebase-autostash":
                self.pull("pull", "--rebase", "--autostash")
            elif self.mode == "stash-pop":
                before = self.stash_top()
                stash = self.git(self.mine, "stash")
                if stash.returncode != 0:
                    self.note_failure("stash", stash)
                stashed = self.stash_top() != before
                self.pull("pull", "--no-rebase", "--no-edit")
                self.settle(started)
                if stashed:
                    self.pop(started)
            self.settle(started)
            self.pop_leftovers(started)

    def pull(self, *args: str) -> None:
        out = self.git(self.mine, *args)
        with self.lock:
            self.fig.pulls += 1
            if out.returncode != 0:
                self.fig.pull_failures[git_failure_reason(out.stdout + out.stderr)] += 1

    def commit_and_push(self, message: str) -> bool:
        """Commits the memory file if it changed; pushes. Whether a commit was made."""
        self.ok(self.mine, "add", MEMORY)
        if self.git(self.mine, "diff", "--cached", "--quiet", "--", MEMORY).returncode == 0:
            return False
        commit = self.git(self.mine, "commit", "-q", "-m", message, "--", MEMORY)
        if commit.returncode != 0:
            self.note_failure("commit", commit)
            return False
        push = self.git(self.mine, "push", "-q", "origin", "main")
        with self.lock:
            self.fig.commits += 1
            if push.returncode == 0:
                self.fig.pushes += 1
            else:
                self.fig.push_rejected += 1
        return True

    def stash_top(self) -> str:
        return self.git(self.mine, "rev-parse", "-q", "--verify", "refs/stash").stdout.strip()

    def stopped(self) -> str | None:
        gitdir = self.mine / ".git"
        for name in ("rebase-merge", "rebase-apply", "MERGE_HEAD"):
            if (gitdir / name).exists():
                return name
        return None

    def unmerged(self) -> list[str]:
        out = self.git(self.mine, "diff", "--name-only", "--diff-filter=U")
        return [p for p in out.stdout.splitlines() if p]

    def union(self, path: str) -> str:
        texts = [(self.mine / path).read_text()]
        for stage in ("2", "3"):
            shown = self.git(self.mine, "show", f":{stage}:{path}")
            if shown.returncode == 0:
                texts.append(shown.stdout)
        seen: set[str] = set()
        kept = []
        for text in texts:
            for line in text.splitlines():
                if not line.strip() or line.startswith(MARKER_PREFIXES) or line in seen:
                    continue
                seen.add(line)
                kept.append(line)
        return "".join(line + "\n" for line in kept)

    def resolve_plainly(self, paths: list[str]) -> None:
        """While git is stopped (the store refuses writes), a plain, atomic rewrite."""
        for path in paths:
            text = self.union(path)
            temp = self.mine / (path + ".resolving")
            temp.write_text(text)
            os.replace(temp, self.mine / path)
            self.ok(self.mine, "add", path)

    def resolve_through_store(self, paths: list[str]) -> bool:
        """No marker of git's stops the agents: the union is written by the store, held
        to the version it was made from."""
        for path in paths:
            for _ in range(20):
                current = (self.mine / path).read_bytes()
                text = self.union(path)
                out = self.metis(self.mine, "consolidate", Path(path).name, "-",
                                 "--expect-hash", hashlib.sha256(current).hexdigest(),
                                 stdin=text)
                if out.returncode == 0:
                    break
            else:
                self.note_failure("consolidate", out)
                return False
            self.ok(self.mine, "add", path)
        return True

    def discard(self, started: float, *args: str) -> None:
        out = self.git(self.mine, *args)
        with self.lock:
            self.fig.discarding.append((started, time.monotonic(), " ".join(args)))
        if out.returncode != 0:
            self.note_failure(" ".join(args), out)

    def settle(self, started: float) -> None:
        """Finishes a merge or rebase that git stopped, as a careful person would."""
        for _ in range(6):
            state = self.stopped()
            if state is None:
                return
            conflicted = self.unmerged()
            self.resolve_plainly(conflicted)
            if state == "MERGE_HEAD":
                out = self.git(self.mine, "commit", "-q", "--no-edit")
            else:
                if not conflicted and self.git(self.mine, "diff", "--quiet").returncode:
                    # A pick refused because the work tree changed under the rebase (an
                    # add that landed before git's marker did): put it aside, go on, and
                    # pop it after (pop_leftovers), rather than abort over it.
                    stash = self.git(self.mine, "stash")
                    with self.lock:
                        self.fig.stashed_in_rebase += 1
                    if stash.returncode != 0:
                        self.note_failure("stash in a stopped rebase", stash)
                out = self.git(self.mine, "rebase", "--continue")
            if out.returncode != 0:
                said = out.stdout + out.stderr
                self.note_failure(f"{state} finish", out)
                if state != "MERGE_HEAD" and "head-name" in said:
                    # git died starting the rebase ("could not reset --hard") and left
                    # .git/rebase-merge holding only its autostash: neither --continue
                    # nor --abort can end it. --quit keeps HEAD, the index and the work
                    # tree, and moves the autostash to the stash list (popped after).
                    quit_ = self.git(self.mine, "rebase", "--quit")
                    with self.lock:
                        self.fig.rebases_quit += 1
                    if quit_.returncode != 0:
                        self.note_failure("rebase --quit", quit_)
                elif state != "MERGE_HEAD" and not self.unmerged() and (
                        "nothing to commit" in said or "No changes" in said):
                    self.discard(started, "rebase", "--skip")
            else:
                with self.lock:
                    self.fig.stopped_resolved += 1
        state = self.stopped()
        if state == "MERGE_HEAD":
            self.discard(started, "merge", "--abort")
        elif state is not None:
            self.discard(started, "rebase", "--abort")

    def pop(self, started: float) -> None:
        for attempt in range(3):
            out = self.git(self.mine, "stash", "pop")
            if out.returncode == 0:
                return
            said = out.stdout + out.stderr
            if self.unmerged():
                # Applied with conflicts, the stash kept.
                if self.resolve_through_store(self.unmerged()):
                    self.ok(self.mine, "stash", "drop", "-q")
                    with self.lock:
                        self.fig.stopped_resolved += 1
                return
            if "would be overwritten" in said or "Your local changes" in said:
                with self.lock:
                    self.fig.stash_pops_retried += 1
                self.commit_and_push(f"before stash pop {attempt}")
                continue
            self.note_failure("stash pop", out)
            return
        with self.lock:
            self.fig.other_failures["stash pop: still refused after 3 commits"] += 1

    def pop_leftovers(self, started: float) -> None:
        for _ in range(2):
            if not self.stash_top():
                return
            with self.lock:
                self.fig.leftover_stashes_popped += 1
            self.pop(started)
            self.settle(started)

    # --- the whole mode -------------------------------------------------------------

    def go(self) -> Figures:
        began = time.monotonic()
        self.set_up()
        rngs = [random.Random(self.rng.random()) for _ in range(len(AGENTS) + 2)]
        errors: list[str] = []

        def guarded(target, *args):
            def body():
                try:
                    target(*args)
                except BaseException:
                    errors.append(traceback.format_exc())
                    self.stop.set()
            return threading.Thread(target=body, daemon=True, name=target.__name__)

        agents = [guarded(self.agent, name, rngs[i]) for i, name in enumerate(AGENTS)]
        team = guarded(self.team_member, rngs[-2])
        person = guarded(self.person, rngs[-1])
        for thread, name in zip(agents, AGENTS):
            thread.name = f"agent-{name}"
        for thread in [*agents, team, person]:
            thread.start()
        person.join()
        self.stop.set()
        for thread in [*agents, team]:
            thread.join()
        self.fig.errors.extend(errors)
        try:
            if not errors:
                self.check()
        finally:
            self.fig.seconds = time.monotonic() - began
            self.log_file.close()
        return self.fig

    def read_memory(self) -> str:
        try:
            return (self.mine / MEMORY).read_text()
        except FileNotFoundError:
            return ""

    def recover(self) -> list[str]:
        listed = json.loads(self.metis_ok(self.mine, "--json", "recover"))["lost"]
        return [item["entry"] for item in listed if item["file"] == "MEMORY.md"]

    def check(self) -> None:
        fig = self.fig
        now = time.monotonic()
        self.settle(now)
        self.pop_leftovers(now)
        fig.stash_left = len(self.ok(self.mine, "stash", "list").splitlines())
        fig.status = self.ok(self.mine, "status", "--porcelain=v1", "--branch").strip()
        in_file = lines_of(self.read_memory())
        seeds = [self.entry("s", n) for n in range(1, SEEDS + 1)]
        fig.seeds_missing = [e for e in seeds if e not in in_file]
        listed = self.recover()
        fig.recover_total = len(listed)
        listed_set = set(listed)
        for add in fig.acknowledged:
            if add.entry in in_file:
                continue
            if add.entry in listed_set:
                fig.listed.append(add.entry)
            elif any(start - 1.0 <= add.ended and add.started <= end
                     for start, end, _ in fig.discarding):
                fig.touched.append(add.entry)
            else:
                fig.lost.append(add.entry)

        # What a person told of the residue does: put it back.
        if listed:
            again = self.metis(self.mine, "recover", "--add")
            if again.returncode != 0:
                self.note_failure("recover --add", again)
        in_file = lines_of(self.read_memory())
        fig.not_restored = [a.entry for a in fig.acknowledged
                            if a.entry not in in_file and a.entry not in fig.lost]

        # Both ways through origin: everything the team pushed reaches mine.
        self.commit_and_push("final")
        pull = self.git(self.mine, "pull", "--no-rebase", "--no-edit")
        if pull.returncode != 0:
            self.note_failure("final pull", pull)
        self.settle(time.monotonic())
        in_file = lines_of(self.read_memory())
        if not fig.discarding:
            fig.team_missing = [e for e in fig.team_pushed if e not in in_file]
            fig.seeds_missing_after = [e for e in seeds if e not in in_file]
        fig.lost_in_sync = [a.entry for a in fig.acknowledged
                            if a.entry not in in_file and a.entry not in fig.lost
                            and a.entry not in fig.not_restored and a.entry not in fig.touched]

    # --- report ---------------------------------------------------------------------


def refusal_reason(stdout: str, stderr: str) -> str:
    try:
        error = json.loads(stdout)["error"]
        kind, message = error.get("kind", "?"), error.get("message", "")
    except (ValueError, KeyError, TypeError):
        kind, message = "?", first_line(stderr or stdout)
    doing = re.search(r"was not written: (git is .+?)(?: in this repository|,|\()", message)
    if doing:
        return f"{kind}: {doing.group(1).strip()}"
    return f"{kind}: {' '.join(message.split()[:6])}"


def counted(counter: collections.Counter) -> str:
    return ", ".join(f"{n} {reason}" for reason, n in counter.most_common()) or "none"


def report(fig: Figures) -> None:
    acks = len(fig.acknowledged)
    refused = sum(fig.refused.values())
    failed = sum(fig.pull_failures.values())
    print(f"[{fig.mode}] {fig.seconds:.1f} s: {acks} acknowledged adds, {refused} refused "
          f"({counted(fig.refused)})")
    print(f"[{fig.mode}] {fig.pulls} pulls, {failed} failed ({counted(fig.pull_failures)}); "
          f"{fig.commits} commits of mine, {fig.pushes} pushed, {fig.push_rejected} pushes "
          f"rejected; {len(fig.team_pushed)} team entries pushed ({fig.team_pulls} team pulls)")
    print(f"[{fig.mode}] stopped operations finished: {fig.stopped_resolved}; stash pops "
          f"retried after a commit: {fig.stash_pops_retried}; leftover stashes popped: "
          f"{fig.leftover_stashes_popped}; work tree stashed in a stopped rebase: "
          f"{fig.stashed_in_rebase}; broken rebases quit: {fig.rebases_quit}; "
          f"discarding commands: {len(fig.discarding)}"
          + (f" ({', '.join(d for _, _, d in fig.discarding)})" if fig.discarding else ""))
    if fig.other_failures:
        print(f"[{fig.mode}] other failed commands: {counted(fig.other_failures)}")
    print(f"[{fig.mode}] at the end: {fig.stash_left} stashes left; "
          f"git status: {' | '.join(fig.status.splitlines())}")
    print(f"[{fig.mode}] LOST {len(fig.lost)}; listed by recover {len(fig.listed)} "
          f"(recover lists {fig.recover_total}); touched by a discarding command "
          f"{len(fig.touched)}; not in the file after recover --add {len(fig.not_restored)}; "
          f"seeds missing {len(fig.seeds_missing)}, after the final pull "
          f"{len(fig.seeds_missing_after)}; team entries missing after it "
          f"{len(fig.team_missing)}; acknowledged adds missing after it "
          f"{len(fig.lost_in_sync)}")
    for name, entries in [("lost", fig.lost), ("listed by recover", fig.listed),
                          ("touched by a discarding command", fig.touched),
                          ("not restored by recover --add", fig.not_restored),
                          ("team entries missing", fig.team_missing),
                          ("seeds missing", fig.seeds_missing),
                          ("seeds missing after the final pull", fig.seeds_missing_after),
                          ("missing after the final pull", fig.lost_in_sync)]:
        if entries:
            print(f"[{fig.mode}]   {name}: {entries}")
    for error in fig.errors:
        print(f"[{fig.mode}] HARNESS ERROR:\n{error}", file=sys.stderr)
    sys.stdout.flush()
    sys.stderr.flush()


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("cli")
    parser.add_argument("--operations", type=int, default=25)
    parser.add_argument("--modes", default=",".join(MODES))
    parser.add_argument("--seed", type=int, default=None)
    parser.add_argument("--keep", action="store_true", help="keep the temporary directory")
    parser.add_argument("--trace", action="store_true",
                        help="run mine's git commands and every metis-memory process under "
                             "strace (in each mode's strace/), to find out how an add was lost")
    parser.add_argument("--shared-key", action="store_true",
                        help="entries share their first word (- agent A 17): the merge "
                             "driver takes same-named new lines on both sides as edits")
    args = parser.parse_args()
    modes = [m for m in args.modes.split(",") if m]
    unknown = [m for m in modes if m not in MODES]
    if unknown:
        parser.error(f"unknown modes {unknown}; known: {MODES}")
    seed = args.seed if args.seed is not None else random.randrange(1 << 32)
    rng = random.Random(seed)
    top = Path(tempfile.mkdtemp(prefix="metis-git-"))
    # A copy: a rebuild of target/ during the run must not change the program under test.
    (top / "bin").mkdir()
    cli = str(top / "bin" / "metis-memory")
    shutil.copy2(args.cli, cli)
    print(f"seed {seed}; {args.operations} operations per mode; in {top}", flush=True)
    results: list[Figures] = []
    harness_error = None
    try:
        for mode in modes:
            fig = Mode(cli, mode, top / mode, args.operations, rng, args.shared_key,
                       args.trace).go()
            results.append(fig)
            report(fig)
            if fig.errors:
                harness_error = f"{mode}: {fig.errors[0].strip().splitlines()[-1]}"
                break
    except Exception:
        traceback.print_exc()
        harness_error = traceback.format_exc().strip().splitlines()[-1]
    sys.stderr.flush()

    acks = sum(len(f.acknowledged) for f in results)
    pulls = sum(f.pulls for f in results)
    lost = sum(len(f.lost) for f in results)
    listed = sum(len(f.listed) for f in results)
    end_failures = sum(len(f.not_restored) + len(f.lost_in_sync) for f in results)
    destroyed = sum(len(f.team_missing) + max(len(f.seeds_missing), len(f.seeds_missing_after))
                    for f in results)
    touched = sum(len(f.touched) for f in results)
    summary = (f"git: {acks} acknowledged adds under {pulls} pulls "
               f"(modes {', '.join(f.mode for f in results)}), {lost} lost, "
               f"{listed} listed by recover")
    if touched:
        summary += f", {touched} touched by a discarding command"
    if destroyed:
        summary += f", {destroyed} seed or team entries destroyed"
    if end_failures:
        summary += f", {end_failures} missing at the end checks"
    if harness_error:
        summary += f"; HARNESS ERROR: {harness_error}"
    # sync is the path that loses nothing: not even an add left for recover to list.
    listed_in_sync = sum(len(f.listed) for f in results if f.mode == "sync")
    if listed_in_sync:
        summary += f", {listed_in_sync} listed by recover under sync"
    failed = bool(lost or end_failures or destroyed or harness_error or listed_in_sync)
    if args.keep or failed:
        # Each mode's log.txt has every command with its times and output.
        print(f"kept {top}", flush=True)
    else:
        shutil.rmtree(top, ignore_errors=True)
    if failed:
        summary += " (FAILED)"
    print(summary, flush=True)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
