package rank

// porterStem is Martin Porter's stemming algorithm as his reference C
// implementation and SQLite FTS5's porter tokenizer have it: the 1980
// algorithm with the two departures of the C version (step 2 maps "bli" to
// "ble" instead of "abli" to "able", and adds "logi" to "log"). Snowball's
// "porter" keeps the paper's rules and so stems "technology" differently
// from FTS5. word must be lower case; bytes other than a-z count as
// consonants.
func porterStem(word string) string {
	if len(word) <= 2 {
		return word
	}
	p := porter{b: []byte(word), k: len(word) - 1}
	p.step1ab()
	if p.k > 0 {
		p.step1c()
		p.step2()
		p.step3()
		p.step4()
		p.step5()
	}
	return string(p.b[:p.k+1])
}

// porter is the reference implementation's state: the word b[0..k], and j,
// the end of the stem before a suffix matched by ends.
type porter struct {
	b    []byte
	k, j int
}

// cons reports whether b[i] is a consonant.
func (p *porter) cons(i int) bool {
	switch p.b[i] {
	case 'a', 'e', 'i', 'o', 'u':
		return false
	case 'y':
		return i == 0 || !p.cons(i-1)
	}
	return true
}

// m counts the vowel-consonant sequences of b[0..j].
func (p *porter) m() int {
	n, i := 0, 0
	for {
		if i > p.j {
			return n
		}
		if !p.cons(i) {
			break
		}
		i++
	}
	i++
	for {
		for {
			if i > p.j {
				return n
			}
			if p.cons(i) {
				break
			}
			i++
		}
		i++
		n++
		for {
			if i > p.j {
				return n
			}
			if !p.cons(i) {
				break
			}
			i++
		}
		i++
	}
}

// vowelInStem reports whether b[0..j] holds a vowel.
func (p *porter) vowelInStem() bool {
	for i := 0; i <= p.j; i++ {
		if !p.cons(i) {
			return true
		}
	}
	return false
}

// doublec reports whether b[i-1..i] is a double consonant.
func (p *porter) doublec(i int) bool {
	return i >= 1 && p.b[i] == p.b[i-1] && p.cons(i)
}

// cvc reports whether b[i-2..i] is consonant-vowel-consonant and b[i] is
// not w, x or y.
func (p *porter) cvc(i int) bool {
	if i < 2 || !p.cons(i) || p.cons(i-1) || !p.cons(i-2) {
		return false
	}
	switch p.b[i] {
	case 'w', 'x', 'y':
		return false
	}
	return true
}

// ends reports whether b[0..k] ends with s, and sets j before it.
func (p *porter) ends(s string) bool {
	n := len(s)
	if n > p.k+1 || string(p.b[p.k-n+1:p.k+1]) != s {
		return false
	}
	p.j = p.k - n
	return true
}

// setto replaces b[j+1..k] with s.
func (p *porter) setto(s string) {
	p.b = append(p.b[:p.j+1], s...)
	p.k = p.j + len(s)
}

func (p *porter) r(s string) {
	if p.m() > 0 {
		p.setto(s)
	}
}

func (p *porter) step1ab() {
	if p.b[p.k] == 's' {
		switch {
		case p.ends("sses"):
			p.k -= 2
		case p.ends("ies"):
			p.setto("i")
		case p.b[p.k-1] != 's':
			p.k--
		}
	}
	if p.ends("eed") {
		if p.m() > 0 {
			p.k--
		}
		return
	}
	if (p.ends("ed") || p.ends("ing")) && p.vowelInStem() {
		p.k = p.j
		switch {
		case p.ends("at"):
			p.setto("ate")
		case p.ends("bl"):
			p.setto("ble")
		case p.ends("iz"):
			p.setto("ize")
		case p.doublec(p.k):
			p.k--
			switch p.b[p.k] {
			case 'l', 's', 'z':
				p.k++
			}
		default:
			p.j = p.k
			if p.m() == 1 && p.cvc(p.k) {
				p.setto("e")
			}
		}
	}
}

func (p *porter) step1c() {
	if p.ends("y") && p.vowelInStem() {
		p.b[p.k] = 'i'
	}
}

// suffixRule maps a suffix to its replacement.
type suffixRule struct{ from, to string }

// step2Rules and step3Rules are tried in order, by the suffix's
// second-to-last (step 2) or last (step 3) letter; the first suffix that
// ends the word decides, whether or not the stem is long enough.
var step2Rules = map[byte][]suffixRule{
	'a': {{"ational", "ate"}, {"tional", "tion"}},
	'c': {{"enci", "ence"}, {"anci", "ance"}},
	'e': {{"izer", "ize"}},
	'l': {{"bli", "ble"}, {"alli", "al"}, {"entli", "ent"}, {"eli", "e"}, {"ousli", "ous"}},
	'o': {{"ization", "ize"}, {"ation", "ate"}, {"ator", "ate"}},
	's': {{"alism", "al"}, {"iveness", "ive"}, {"fulness", "ful"}, {"ousness", "ous"}},
	't': {{"aliti", "al"}, {"iviti", "ive"}, {"biliti", "ble"}},
	'g': {{"logi", "log"}},
}

var step3Rules = map[byte][]suffixRule{
	'e': {{"icate", "ic"}, {"ative", ""}, {"alize", "al"}},
	'i': {{"iciti", "ic"}},
	'l': {{"ical", "ic"}, {"ful", ""}},
	's': {{"ness", ""}},
}

func (p *porter) applyRules(rules []suffixRule) {
	for _, r := range rules {
		if p.ends(r.from) {
			p.r(r.to)
			return
		}
	}
}

func (p *porter) step2() {
	if p.k == 0 {
		return
	}
	p.applyRules(step2Rules[p.b[p.k-1]])
}

func (p *porter) step3() { p.applyRules(step3Rules[p.b[p.k]]) }

// step4Suffixes are removed when the stem has m() > 1, by the suffix's
// second-to-last letter; "ion" only after s or t.
var step4Suffixes = map[byte][]string{
	'a': {"al"}, 'c': {"ance", "ence"}, 'e': {"er"}, 'i': {"ic"}, 'l': {"able", "ible"},
	'n': {"ant", "ement", "ment", "ent"}, 'o': {"ion", "ou"}, 's': {"ism"}, 't': {"ate", "iti"},
	'u': {"ous"}, 'v': {"ive"}, 'z': {"ize"},
}

func (p *porter) step4() {
	if p.k == 0 {
		return
	}
	matched := false
	for _, s := range step4Suffixes[p.b[p.k-1]] {
		if !p.ends(s) {
			continue
		}
		if s == "ion" && (p.j < 0 || (p.b[p.j] != 's' && p.b[p.j] != 't')) {
			continue
		}
		matched = true
		break
	}
	if matched && p.m() > 1 {
		p.k = p.j
	}
}

func (p *porter) step5() {
	p.j = p.k
	if p.b[p.k] == 'e' {
		a := p.m()
		if a > 1 || a == 1 && !p.cvc(p.k-1) {
			p.k--
		}
	}
	if p.b[p.k] == 'l' && p.doublec(p.k) && p.m() > 1 {
		p.k--
	}
}
