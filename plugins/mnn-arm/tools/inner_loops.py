"""Static count of the micro-kernels' inner loops in cross-compiled objects.

    tests/harness/build.sh /tmp/hb && cd /tmp/hb && python3 PATH/TO/tools/inner_loops.py

For each backward branch whose body holds >= 8 fmla/sdot: body length and opcode histogram."""
import re, subprocess, sys
def loops(obj, mnem):
    out = subprocess.run(["aarch64-linux-gnu-objdump", "-d", "--no-show-raw-insn", obj], capture_output=True, text=True).stdout
    insns = []
    for line in out.splitlines():
        m = re.match(r"\s+([0-9a-f]+):\s+(\S+)\s*(.*)", line)
        if m: insns.append((int(m.group(1), 16), m.group(2), m.group(3)))
    res = []
    for i, (addr, op, args) in enumerate(insns):
        if op.startswith("b") and op not in ("bl", "blr", "br") :
            t = re.search(r"^([0-9a-f]+)\s", args.split(",")[-1].strip() + " ")
            if t:
                tgt = int(t.group(1), 16)
                if tgt < addr:
                    body = [x for x in insns if tgt <= x[0] <= addr]
                    n = sum(1 for x in body if x[1] == mnem)
                    if n >= 8: res.append((len(body), n, {k: sum(1 for x in body if x[1] == k) for k in set(x[1] for x in body)}))
    return res
for obj, mnem in (("fp32.o", "fmla"), ("fp16.o", "fmla"), ("int8_dot.o", "sdot")):
    for body, n, hist in sorted(loops(obj, mnem), key=lambda r: -r[1])[:4]:
        print(obj, "loop insns", body, mnem, n, dict(sorted(hist.items(), key=lambda kv: -kv[1])[:6]))
