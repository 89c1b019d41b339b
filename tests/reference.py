"""Independent Python implementations of the checksums in docs/workloads.md, used as test oracles."""

MOD = 2147483647
MASK64 = (1 << 64) - 1


def lcg(seed: int, count: int) -> list[int]:
    x, out = seed, []
    for _ in range(count):
        out.append(x)
        x = 48271 * x % MOD
    return out


def xorshift(i: int, work: int) -> int:
    x = (i + 1) & MASK64
    for _ in range(work):
        x ^= (x << 13) & MASK64
        x ^= x >> 7
        x ^= (x << 17) & MASK64
    return x


def sleep_checksum(n: int, work: int, kernel: str = "xorshift") -> str:
    total = 0
    for i, r in enumerate(lcg(42, n)):
        result = xorshift(i, work) if kernel == "xorshift" else 0
        total = (total + result + r % 300) & MASK64
    return f"{total:016x}"


def cpu_loops_checksum(n: int, inner: int, u: int) -> str:
    """The sum of the N elements, each (sum of j mod u) + r wrapped to 32 bits."""
    r = lcg(42, 1)[0] % n
    per_element = sum(j % u for j in range(inner))
    return f"{(n * ((per_element + r) & 0xFFFFFFFF)) & MASK64:016x}"


def fixture_file(k: int) -> bytes:
    """File k.txt of the files fixture: 3 * (k + 1) lines of 63 equal letters and a newline."""
    return b"".join(bytes([ord("a") + (k + j) % 26]) * 63 + b"\n" for j in range(3 * (k + 1)))


def fnv1a64(data: bytes) -> int:
    h = 0xCBF29CE484222325
    for b in data:
        h = ((h ^ b) * 0x100000001B3) & MASK64
    return h


def files_read_checksum(n: int, digest: str = "on") -> str:
    """digest=off: each task contributes only the size it read."""
    files = [fixture_file(k) for k in range(20)]
    digests = [fnv1a64(f) if digest == "on" else 0 for f in files]
    total = 0
    for r in lcg(42, n):
        k = r % 20
        total = (total + digests[k] + len(files[k])) & MASK64
    return f"{total:016x}"


APPENDED = b"Appended string\n"


def files_rw_checksum(n: int) -> str:
    """The appends, the final size of the 20 files, and for every read its fixture bytes (a read of
    file k holds its fixture content and the appends it saw, which the programs take off) and its
    first byte (file k's letter)."""
    picks = [r % 20 for r in lcg(42, n)]
    appends = sum(1 for k in picks if k % 2 == 0)
    sizes = sum(len(fixture_file(k)) for k in range(20)) + appends * len(APPENDED)
    read = sum(len(fixture_file(k)) + fixture_file(k)[0] for k in picks)
    return f"{(appends + sizes + read) & MASK64:016x}"


def users_rows(count: int = 10_000) -> list[tuple[int, int, int, str]]:
    salaries, ages = lcg(7, count), lcg(9, count)
    return [(k, salaries[k] % 201, ages[k] % 100, "Somewhere") for k in range(count)]


def sql_checksum(n: int) -> str:
    rows = users_rows()
    per_age: dict[int, int] = {}
    for _, _, age, _ in rows:
        per_age[age] = per_age.get(age, 0) + 1
    updates = returned = 0
    for a in (x % 100 for x in lcg(42, n)):
        if a % 2 == 0:
            updates += 1
        else:
            returned += per_age.get(a, 0)
    total_salary = sum(r[1] for r in rows) + updates
    return f"{(updates + returned + total_salary) & MASK64:016x}"


def ping_pong_checksum(n: int) -> str:
    return f"{(n * (n + 1) // 2) & MASK64:016x}"
