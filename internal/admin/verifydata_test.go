package admin

import (
	"strings"
	"testing"
)

func sumsOf(sn uint64, s ...uint64) replicaSums {
	r := replicaSums{SN: sn, Sums: map[uint32]partSum{}}
	for i, v := range s {
		r.Sums[uint32(i)] = partSum{Sum: v, Records: 1, Bytes: 10}
	}
	return r
}

func TestCompareSums(t *testing.T) {
	three := []uint64{1, 2, 3}
	for _, tc := range []struct {
		name                       string
		got                        []replicaSums
		differ, noMajority, failed int
		want                       []string // in the sentences, in order
	}{
		{name: "all agree", got: []replicaSums{sumsOf(1, 5, 6), sumsOf(2, 5, 6), sumsOf(3, 5, 6)}},
		{name: "one partition differs on sn3", got: []replicaSums{sumsOf(1, 5, 6), sumsOf(2, 5, 6), sumsOf(3, 5, 7)}, differ: 1,
			want: []string{"rg1 partition 1 differs on sn3 (sum 0000000000000007, 1 record vs sum 0000000000000006, 1 record on sn1, sn2)"}},
		{name: "no majority", got: []replicaSums{sumsOf(1, 5), sumsOf(2, 6), sumsOf(3, 7)}, noMajority: 1,
			want: []string{"rg1 partition 0: no 2 replicas agree (sn1 sum 0000000000000005", "nothing repaired"}},
		{name: "a replica without sums still leaves a majority", got: []replicaSums{sumsOf(1, 5), sumsOf(2, 5), {SN: 3, Err: "corrupt"}}, failed: 1,
			want: []string{"rg1 could not be checked on sn3: corrupt"}},
		{name: "two without sums leave none", got: []replicaSums{sumsOf(1, 5), {SN: 2, Err: "x"}, {SN: 3, Err: "y"}}, noMajority: 1, failed: 2},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := compareSums(1, three, tc.got)
			if len(c.Differ) != tc.differ || len(c.NoMajority) != tc.noMajority || len(c.Failed) != tc.failed {
				t.Fatalf("%+v", c)
			}
			var text []string
			text = append(text, c.Failed...)
			text = append(text, c.NoMajority...)
			for _, sn := range c.divergentNodes() {
				text = append(text, c.differText(1, sn)...)
			}
			all := strings.Join(text, "\n")
			for _, w := range tc.want {
				if !strings.Contains(all, w) {
					t.Errorf("want %q in:\n%s", w, all)
				}
			}
			if c.clean() != (tc.differ+tc.noMajority+tc.failed == 0) {
				t.Errorf("clean() = %v", c.clean())
			}
		})
	}
	if got := agreeText(1, 50, three, 8123); got != "rg1: 50 partitions agree on sn1, sn2, sn3 at index 8123" {
		t.Errorf("agreeText: %q", got)
	}
}
