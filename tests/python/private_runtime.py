"""The private runtime directory each Python test class runs its daemons in."""
import os
import tempfile


def private_runtime_dir():
    """A new XDG_RUNTIME_DIR (mode 0700, as the daemons require) with XDG_STATE_HOME (checkpoints)
    inside it, set for this process and the ones it starts. The caller cleans it up."""
    rt = tempfile.TemporaryDirectory()
    os.chmod(rt.name, 0o700)
    os.environ["XDG_RUNTIME_DIR"] = rt.name
    os.environ["XDG_STATE_HOME"] = os.path.join(rt.name, "state")
    return rt
