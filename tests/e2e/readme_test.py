"""tests/e2e/readme.py, the comparison the README's quick-start tests rest on: it finds lines
whose measured numbers differ and misses lines whose words differ."""
import os
import sys
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import readme  # noqa: E402

README = """text
<!-- quickstart demo: commands -->
```bash
echo hello
```
<!-- quickstart demo: output -->
```text
   1K   4/4   64    yes fwd+bwd zigzag … 186.13 ms     34       ok
...
results: study/ringscale_np2_20261127T092627Z_p30527.h5
study: …/studies/gpu
```
"""


def missing(output):
    return readme.check(README, "demo", output)


class readme_check(unittest.TestCase):
    def test_commands_are_the_block_after_the_marker(self):
        self.assertEqual(readme.block(README, "demo", "commands"), "echo hello\n")

    def test_other_numbers_units_order_and_a_longer_line_are_found(self):
        out = ("study: /tmp/x/home/studies/gpu\n"
               "results: study/ringscale_np4_20270101T000000Z_p1.h5\n"
               "2K 8/8 128 yes fwd+bwd zigzag - on 9 9 - - 1 2e-06 1.25 s 3 ok <- fastest\n")
        self.assertEqual(missing(out), [])

    def test_a_different_word_is_missing(self):
        out = ("study: /tmp/x/home/studies/gpu\n"
               "results: study/ringscale_np4_20270101T000000Z_p1.h5\n"
               "1K 4/4 64 yes fwd+bwd zigzag - on 1.25 s 3 failed\n")
        self.assertEqual(len(missing(out)), 1)
        self.assertIn("ok", missing(out)[0])

    def test_a_line_cut_short_in_the_output_is_missing(self):
        out = "study: /tmp/studies/gpu\nresults: study/ringscale_np2_1T1Z_p1.h5\n1K 4/4 64 yes\n"
        self.assertEqual(len(missing(out)), 1)

    def test_a_missing_marker_stops_with_its_name(self):
        with self.assertRaises(SystemExit) as stop:
            readme.block(README, "other", "output")
        self.assertIn("quickstart other: output", str(stop.exception))


if __name__ == "__main__":
    unittest.main()
