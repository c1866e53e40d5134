"""Real git repositories for tests: a work tree with commits and its bare clone, served over file://."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path


def git(*args, cwd=None) -> str:
    env = dict(os.environ, GIT_AUTHOR_NAME="t", GIT_AUTHOR_EMAIL="t@e", GIT_COMMITTER_NAME="t",
               GIT_COMMITTER_EMAIL="t@e")
    out = subprocess.run(["git", "-c", "protocol.file.allow=always", "-c", "init.defaultBranch=main", *args],
                         cwd=cwd, env=env, check=True, capture_output=True, text=True)
    return out.stdout.strip()


def bare_with_commits(tmp: Path, name: str, files_per_commit: list[dict]) -> tuple[Path, list[str]]:
    work, bare = tmp / f"{name}-work", tmp / f"{name}.git"
    git("init", "-q", str(work))
    commits = []
    for files in files_per_commit:
        for rel, text in files.items():
            (work / rel).parent.mkdir(parents=True, exist_ok=True)
            (work / rel).write_text(text)
        git("add", "-A", cwd=work)
        git("commit", "-q", "-m", "c", cwd=work)
        commits.append(git("rev-parse", "HEAD", cwd=work))
    git("clone", "-q", "--bare", str(work), str(bare))
    git("config", "uploadpack.allowReachableSHA1InWant", "true", cwd=bare)
    git("config", "uploadpack.allowAnySHA1InWant", "true", cwd=bare)
    return work, commits
