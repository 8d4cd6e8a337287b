package textindex

import "unicode"

// Unspaced reports whether r belongs to a script written without spaces
// between words (Han, Hiragana, Katakana, Bopomofo, Thai, Lao, Khmer,
// Myanmar, Yi). Word-based tokenizers turn a run of such characters into one
// giant token, so adapters and QuestionQuery split them into characters.
func Unspaced(r rune) bool {
	if r < 0x0E00 {
		return false // fast path: everything below Thai
	}
	switch r {
	case 0x3005, 0x3006, 0x30FC, 0xFF70: // 々 〆 ー ｰ: Common-script marks used inside Japanese words
		return true
	}
	return unicode.In(r, unicode.Han, unicode.Hiragana, unicode.Katakana, unicode.Bopomofo,
		unicode.Thai, unicode.Lao, unicode.Khmer, unicode.Myanmar, unicode.Yi)
}
