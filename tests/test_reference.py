"""The oracle itself, against values stated in docs/workloads.md and worked by hand."""
from reference import cpu_loops_checksum, files_read_checksum, files_rw_checksum, lcg, sleep_checksum, xorshift


def test_lcg_matches_the_specification():
    assert lcg(42, 4) == [42, 2027382, 1226992407, 551494037]


def test_xorshift_one_round_by_hand():
    x = 1
    x ^= x << 13  # 8193
    x ^= x >> 7   # 8193 ^ 64 = 8257
    x ^= (x << 17) & ((1 << 64) - 1)
    assert xorshift(0, 1) == x == 8257 ^ (8257 << 17)


def test_sleep_article_kernel_is_only_the_sleep_sum():
    assert int(sleep_checksum(10, 5, "article"), 16) == sum(v % 300 for v in lcg(42, 10))


def test_cpu_loops_closed_form():
    # sum of j % 10 over 0..99,999 is 10,000 * 45; r = 42 % 10,000
    assert int(cpu_loops_checksum(10_000, 100_000, 10), 16) == 10_000 * (450_000 + 42)


def test_files_read_without_digest_is_the_bytes_read():
    # tasks 0..3 read files 2, 2, 7 and 17 (lcg(42) mod 20): 3 (k + 1) = 9, 9, 24 and 54 lines of 64 bytes
    assert int(files_read_checksum(4, digest="off"), 16) == (9 + 9 + 24 + 54) * 64
    assert files_read_checksum(4, digest="off") != files_read_checksum(4)


def test_files_rw_by_hand():
    # tasks 0..3 pick files 2, 2, 7 and 17: 2 appends; the 20 files end with 40,320 + 2 * 16 bytes;
    # each read adds its fixture bytes (192 (k + 1)) and its first byte, file k's letter 'a' + k
    reads = 2 * (576 + ord("c")) + (1536 + ord("h")) + (3456 + ord("r"))
    assert int(files_rw_checksum(4), 16) == 2 + 40_320 + 32 + reads == 46_914
