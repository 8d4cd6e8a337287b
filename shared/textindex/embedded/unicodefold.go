package embedded

import "sort"

// The unicode61 tokenizer's folding (remove_diacritics 2), ported from
// SQLite's ext/fts5/fts5_unicode2.c (public domain), so that the terms Go
// computes for a question and for a passage are the ones FTS5 indexed:
// letters are case-folded (below U+10000, and Deseret), and only Latin
// letters lose their diacritics, to the ASCII letter; other scripts keep
// theirs (й, ά, が and Hangul syllables are indexed as they are).

// diaKeys are SQLite's aDia: each entry is a range of code points, the
// first one shifted left by 3 and the range's length less one in the low
// 3 bits, sorted. diaChars are its aChar: the ASCII letter the range folds
// to (0: dropped, a combining mark), 0x80 set when the letter carries more
// than one diacritic.
var diaKeys = [...]uint16{
	0, 1797, 1848, 1859, 1891, 1928, 1940, 1995, 2024, 2040, 2060, 2110,
	2168, 2206, 2264, 2286, 2344, 2383, 2472, 2488, 2516, 2596, 2668, 2732,
	2782, 2842, 2894, 2954, 2984, 3000, 3028, 3336, 3456, 3696, 3712, 3728,
	3744, 3766, 3832, 3896, 3912, 3928, 3944, 3968, 4008, 4040, 4056, 4106,
	4138, 4170, 4202, 4234, 4266, 4296, 4312, 4344, 4408, 4424, 4442, 4472,
	4488, 4504, 6148, 6198, 6264, 6280, 6360, 6429, 6505, 6529, 61448, 61468,
	61512, 61534, 61592, 61610, 61642, 61672, 61688, 61704, 61726, 61784, 61800, 61816,
	61836, 61880, 61896, 61914, 61948, 61998, 62062, 62122, 62154, 62184, 62200, 62218,
	62252, 62302, 62364, 62410, 62442, 62478, 62536, 62554, 62584, 62604, 62640, 62648,
	62656, 62664, 62730, 62766, 62830, 62890, 62924, 62974, 63032, 63050, 63082, 63118,
	63182, 63242, 63274, 63310, 63368, 63390,
}

var diaChars = [...]uint8{
	0, 'a', 'c', 'e', 'i', 'n', 'o', 'u', 'y', 'y',
	'a', 'c', 'd', 'e', 'e', 'g', 'h', 'i', 'j', 'k',
	'l', 'n', 'o', 'r', 's', 't', 'u', 'u', 'w', 'y',
	'z', 'o', 'u', 'a', 'i', 'o', 'u', 0x80 | 'u', 0x80 | 'a', 'g',
	'k', 'o', 0x80 | 'o', 'j', 'g', 'n', 0x80 | 'a', 'a', 'e', 'i',
	'o', 'r', 'u', 's', 't', 'h', 'a', 'e', 0x80 | 'o', 'o',
	0x80 | 'o', 'y', 0, 0, 0, 0, 0, 0, 0, 0,
	'a', 'b', 0x80 | 'c', 'd', 'd', 0x80 | 'e', 'e', 0x80 | 'e', 'f', 'g',
	'h', 'h', 'i', 0x80 | 'i', 'k', 'l', 0x80 | 'l', 'l', 'm', 'n',
	0x80 | 'o', 'p', 'r', 0x80 | 'r', 'r', 's', 0x80 | 's', 't', 'u', 0x80 | 'u',
	'v', 'w', 'w', 'x', 'y', 'z', 'h', 't', 'w', 'y',
	'a', 0x80 | 'a', 0x80 | 'a', 0x80 | 'a', 'e', 0x80 | 'e', 0x80 | 'e', 'i', 'o', 0x80 | 'o',
	0x80 | 'o', 0x80 | 'o', 'u', 0x80 | 'u', 0x80 | 'u', 'y',
}

// removeDiacritic is SQLite's fts5_remove_diacritic(c, 1).
func removeDiacritic(c rune) rune {
	if c < 0xC0 || c > 0x1EFF {
		return c
	}
	key := uint32(c)<<3 | 7
	i := sort.Search(len(diaKeys), func(i int) bool { return uint32(diaKeys[i]) > key }) - 1
	if c > rune(diaKeys[i]>>3)+rune(diaKeys[i]&7) {
		return c
	}
	return rune(diaChars[i] & 0x7f)
}

// foldRune is SQLite's sqlite3Fts5UnicodeFold(c, 2): simple case folding
// (caseFold), then Latin diacritics removed; 0 means the tokenizer drops
// the rune.
func foldRune(r rune) rune {
	switch {
	case r < 0x80:
		if 'A' <= r && r <= 'Z' {
			r += 'a' - 'A'
		}
		return r
	case r < 0x10000:
		return removeDiacritic(caseFold(r))
	case 66560 <= r && r < 66600: // Deseret
		return r + 40
	}
	return r
}

// caseFold is SQLite's case folding of a code point below U+10000
// (Unicode's simple case folding as of the SQLite tables: ϑ and Θ fold
// to θ, ς to σ, ı stays ı).
func caseFold(c rune) rune {
	i := sort.Search(len(foldEntries), func(i int) bool { return rune(foldEntries[i].code) > c }) - 1
	if i < 0 {
		return c
	}
	e := foldEntries[i]
	if c < rune(e.code)+rune(e.n) && rune(e.flags)&1&(rune(e.code)^c) == 0 {
		return (c + rune(foldOffsets[e.flags>>1])) & 0xFFFF
	}
	return c
}

// foldEntries are SQLite's aEntry: from code, n code points fold by the
// offset foldOffsets[flags>>1]; with flags&1 set, only every other one
// (those of code's parity).
var foldEntries = [...]struct {
	code     uint16
	flags, n uint8
}{
	{65, 14, 26}, {181, 64, 1}, {192, 14, 23}, {216, 14, 7}, {256, 1, 48}, {306, 1, 6},
	{313, 1, 16}, {330, 1, 46}, {376, 116, 1}, {377, 1, 6}, {383, 104, 1}, {385, 50, 1},
	{386, 1, 4}, {390, 44, 1}, {391, 0, 1}, {393, 42, 2}, {395, 0, 1}, {398, 32, 1},
	{399, 38, 1}, {400, 40, 1}, {401, 0, 1}, {403, 42, 1}, {404, 46, 1}, {406, 52, 1},
	{407, 48, 1}, {408, 0, 1}, {412, 52, 1}, {413, 54, 1}, {415, 56, 1}, {416, 1, 6},
	{422, 60, 1}, {423, 0, 1}, {425, 60, 1}, {428, 0, 1}, {430, 60, 1}, {431, 0, 1},
	{433, 58, 2}, {435, 1, 4}, {439, 62, 1}, {440, 0, 1}, {444, 0, 1}, {452, 2, 1},
	{453, 0, 1}, {455, 2, 1}, {456, 0, 1}, {458, 2, 1}, {459, 1, 18}, {478, 1, 18},
	{497, 2, 1}, {498, 1, 4}, {502, 122, 1}, {503, 134, 1}, {504, 1, 40}, {544, 110, 1},
	{546, 1, 18}, {570, 70, 1}, {571, 0, 1}, {573, 108, 1}, {574, 68, 1}, {577, 0, 1},
	{579, 106, 1}, {580, 28, 1}, {581, 30, 1}, {582, 1, 10}, {837, 36, 1}, {880, 1, 4},
	{886, 0, 1}, {902, 18, 1}, {904, 16, 3}, {908, 26, 1}, {910, 24, 2}, {913, 14, 17},
	{931, 14, 9}, {962, 0, 1}, {975, 4, 1}, {976, 140, 1}, {977, 142, 1}, {981, 146, 1},
	{982, 144, 1}, {984, 1, 24}, {1008, 136, 1}, {1009, 138, 1}, {1012, 130, 1}, {1013, 128, 1},
	{1015, 0, 1}, {1017, 152, 1}, {1018, 0, 1}, {1021, 110, 3}, {1024, 34, 16}, {1040, 14, 32},
	{1120, 1, 34}, {1162, 1, 54}, {1216, 6, 1}, {1217, 1, 14}, {1232, 1, 88}, {1329, 22, 38},
	{4256, 66, 38}, {4295, 66, 1}, {4301, 66, 1}, {7680, 1, 150}, {7835, 132, 1}, {7838, 96, 1},
	{7840, 1, 96}, {7944, 150, 8}, {7960, 150, 6}, {7976, 150, 8}, {7992, 150, 8}, {8008, 150, 6},
	{8025, 151, 8}, {8040, 150, 8}, {8072, 150, 8}, {8088, 150, 8}, {8104, 150, 8}, {8120, 150, 2},
	{8122, 126, 2}, {8124, 148, 1}, {8126, 100, 1}, {8136, 124, 4}, {8140, 148, 1}, {8152, 150, 2},
	{8154, 120, 2}, {8168, 150, 2}, {8170, 118, 2}, {8172, 152, 1}, {8184, 112, 2}, {8186, 114, 2},
	{8188, 148, 1}, {8486, 98, 1}, {8490, 92, 1}, {8491, 94, 1}, {8498, 12, 1}, {8544, 8, 16},
	{8579, 0, 1}, {9398, 10, 26}, {11264, 22, 47}, {11360, 0, 1}, {11362, 88, 1}, {11363, 102, 1},
	{11364, 90, 1}, {11367, 1, 6}, {11373, 84, 1}, {11374, 86, 1}, {11375, 80, 1}, {11376, 82, 1},
	{11378, 0, 1}, {11381, 0, 1}, {11390, 78, 2}, {11392, 1, 100}, {11499, 1, 4}, {11506, 0, 1},
	{42560, 1, 46}, {42624, 1, 24}, {42786, 1, 14}, {42802, 1, 62}, {42873, 1, 4}, {42877, 76, 1},
	{42878, 1, 10}, {42891, 0, 1}, {42893, 74, 1}, {42896, 1, 4}, {42912, 1, 10}, {42922, 72, 1},
	{65313, 14, 26},
}

// foldOffsets are SQLite's aiOff.
var foldOffsets = [...]uint16{
	1, 2, 8, 15, 16, 26, 28, 32, 37, 38, 40, 48,
	63, 64, 69, 71, 79, 80, 116, 202, 203, 205, 206, 207,
	209, 210, 211, 213, 214, 217, 218, 219, 775, 7264, 10792, 10795,
	23228, 23256, 30204, 54721, 54753, 54754, 54756, 54787, 54793, 54809, 57153, 57274,
	57921, 58019, 58363, 61722, 65268, 65341, 65373, 65406, 65408, 65410, 65415, 65424,
	65436, 65439, 65450, 65462, 65472, 65476, 65478, 65480, 65482, 65488, 65506, 65511,
	65514, 65521, 65527, 65528, 65529,
}
