# The download rules' options (the rules: workflow/rules/download.smk, which includes this file first).


def source_flags(spec):
    """Where `python -m pipeline download` fetches a file: its URL, or the URLs of its parts and how
    they join."""
    if "parts" in spec:
        return [arg for url in spec["parts"] for arg in ("--url", url)] + ["--join", spec["join"]]
    return ["--url", spec["url"]]


def checksum_flags(spec):
    """Checksum options of `python -m pipeline download`."""
    flags = [
        arg
        for algorithm in ("sha256", "sha1", "md5")
        if spec.get(algorithm)
        for arg in (f"--{algorithm}", spec[algorithm])
    ]
    if "checksums_url" in spec:
        flags += ["--checksums-url", spec["checksums_url"]]
    if "member" in spec:  # a file inside a zip / wheel archive (docs/design.md "Downloads")
        flags += ["--member", spec["member"]]
    if "archive_sha256" in spec:
        flags += ["--archive-sha256", spec["archive_sha256"]]
    if spec.get("unverified") and not flags:  # the source publishes no checksum and the config gives none
        flags.append("--unverified")
    return flags
