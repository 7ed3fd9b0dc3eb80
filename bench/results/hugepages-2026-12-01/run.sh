#!/bin/bash
# interleaved A/B: THP madvise (huge pages taken) vs never (4 KiB pages), same binary
cd /work/main
for i in 1 2 3 4 5 6; do
  for mode in madvise never; do
    [ $((i % 2)) -eq 0 ] && { [ $mode = madvise ] && mode=never || mode=madvise; }
    echo $mode > /sys/kernel/mm/transparent_hugepage/enabled
    build/bench/ckbench --threads 1,2 --lengths 128 --runs 2 --tokens 2048 --precision fp32,bf16 --json /tmp/ab/$mode-$i.json > /tmp/ab/$mode-$i.log 2>&1
  done
done
echo madvise > /sys/kernel/mm/transparent_hugepage/enabled
echo done > /tmp/ab/DONE
