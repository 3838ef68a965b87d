package langmodel

// table is an open-addressing hash table from packed n-gram keys to
// float64. It is built once and then only read; a flat slice of key/value
// pairs costs one cache miss per lookup, against the two or more of a Go
// map, which matters because LogProb does several lookups per token.
type table struct {
	slots []slot
	mask  uint64
}

type slot struct {
	key uint64
	val float64
}

// emptyKey marks a free slot. Packed keys use at most 63 bits, so no key
// can equal it.
const emptyKey = ^uint64(0)

// newTable makes a table for n keys with a load factor of at most 3/4, so
// probing always reaches a free slot.
func newTable(n int) table {
	size := 8
	for size*3 < n*4 {
		size *= 2
	}
	t := table{slots: make([]slot, size), mask: uint64(size - 1)}
	for i := range t.slots {
		t.slots[i].key = emptyKey
	}
	return t
}

// mix is the 64-bit finaliser of MurmurHash3: packed keys differ mostly in
// their low bits, which must be spread over the whole index.
func mix(k uint64) uint64 {
	k ^= k >> 33
	k *= 0xff51afd7ed558ccd
	k ^= k >> 33
	k *= 0xc4ceb9fe1a85ec53
	k ^= k >> 33
	return k
}

// put inserts or replaces key's value.
func (t *table) put(key uint64, val float64) {
	i := mix(key) & t.mask
	for {
		s := &t.slots[i]
		if s.key == key || s.key == emptyKey {
			s.key, s.val = key, val
			return
		}
		i = (i + 1) & t.mask
	}
}

// get returns key's value and whether it is present. A zero table (no
// slots) holds nothing.
func (t *table) get(key uint64) (float64, bool) {
	if len(t.slots) == 0 {
		return 0, false
	}
	i := mix(key) & t.mask
	for {
		s := &t.slots[i]
		if s.key == key {
			return s.val, true
		}
		if s.key == emptyKey {
			return 0, false
		}
		i = (i + 1) & t.mask
	}
}
