package vaultgen

import (
	"math/rand/v2"
	"strings"
)

// englishWords are common words, most frequent first, so that a Zipf draw
// over the vocabulary yields stopword-heavy prose like real notes.
const englishWords = `
the of and to in a is that for it as was with be by on not he this are or
his from at which but have an they you were her she there one all we can
been has their if more when will would who so no out up into do any about
time them some could only other new these then two may first than like
also its over such our what most after make made many way well before
must years where much your through back should because each just those
people how too little state good very great year still own under last
never us here between both life being under day three same another know
while might see used part against now place around however small found
again thing thought went say long find right got old world off house
left take work need next set group end why system number point began
change hand high real plan team note notes project garden soil water
seed seeds plant plants bed beds compost harvest tomato tomatoes bean
beans squash pepper herb herbs basil mint sage thyme lettuce kale onion
garlic carrot potato berry berries apple pear plum cherry flower flowers
bloom root roots leaf leaves stem branch tree trees shade sun sunlight
rain frost season spring summer autumn winter weather week month morning
evening volunteer volunteers meeting agenda minutes budget grant fund
funds budget cost price invoice receipt shed tool tools hose barrel
mulch weed weeds pest pests aphid slug worm worms bee bees bird birds
pollinator fence gate path paths trellis greenhouse row rows plot plots
member members neighbour neighbours school children family community
market stall sale signup schedule calendar task tasks issue issues bug
bugs feature release version build test tests server client code
function module package library service database index query search
result results page pages file files folder link links tag tags title
heading section draft review comment comments question answer summary
idea ideas decision decisions risk risks goal goals milestone roadmap
design spec document docs guide manual install setup config option
options default error errors warning log logs event events data model
models vector vectors token tokens request response cache latency
memory disk network cloud bucket object storage backup restore deploy
deployment pipeline script command terminal editor keyboard screen
window phone email message chat thread channel inbox archive journal
daily weekly monthly report metric metrics chart table list sheet
photo image diagram map sketch drawing paint colour color light dark
green yellow red blue brown white black orange purple pink grey
morning noon night today tomorrow yesterday soon later early late
quick slow fast easy hard simple complex clear quiet loud warm cold
wet dry fresh ripe raw sweet bitter sour salty soft firm heavy light
open close start stop finish begin continue pause wait move carry
lift dig plant sow water prune trim cut mow rake sweep clean wash
cook bake boil roast chop slice share give take borrow lend return
buy sell order pay count measure weigh check fix repair break mend
write read edit print sign send receive call visit meet talk listen
ask tell teach learn study practice try fail succeed grow shrink rise
fall spread gather collect sort store keep throw drop pick choose
decide agree argue discuss explain describe compare improve reduce
increase remove replace update upgrade migrate rename split merge
join connect attach detach mount load save export import parse render
format validate verify confirm approve reject publish announce invite
welcome thank remember forget notice ignore miss follow lead guide
support help host serve handle manage track monitor measure estimate
apron glove gloves boot boots bucket buckets wheelbarrow spade fork
trowel shears ladder rope twine stake stakes label labels marker
notebook pencil pen paper card box crate bag sack jar bottle lid
kitchen table chair bench roof wall floor door window corner street
road bridge river lake pond hill field meadow forest wood stone rock
sand clay loam silt gravel brick tile glass metal steel iron copper
wood plastic cotton wool linen rubber leather rope wire cable pipe
nitrogen phosphorus potassium calcium magnesium acid alkaline ph
moisture drainage erosion irrigation drip sprinkler nozzle valve tap
pump tank cistern gutter downpipe runoff puddle flood drought heat
wind storm cloud fog snow ice hail thunder lightning sunrise sunset
north south east west left right top bottom front rear middle edge
inside outside above below near far between beside behind beyond
alice bob carol dave erin frank grace heidi ivan judy mallory oscar
peggy trent victor walter maria yuki chen priya omar lena
`

// otherWords are non-English words (accents, Cyrillic, Greek, Turkish,
// Vietnamese) mixed into the vocabulary's middle ranks.
const otherWords = `
jardín huerto semilla cosecha tierra agua sol lluvia verano otoño
jardin graine récolte été hiver légume fraîche café crème thé
garten samen ernte boden wasser sommer herbst gemüse größe müller straße
giardino seme raccolto terra acqua estate autunno verdura città perché
trädgård frö skörd jord vatten sommar höst grönsak kål björk
ogród nasiona zbiór ziemia woda lato jesień warzywa
сад семена урожай земля вода лето осень овощи грядка компост
κήπος σπόροι συγκομιδή νερό καλοκαίρι
bahçe tohum hasat toprak su yaz sonbahar sebze
vườn hạt giống thu hoạch đất nước mùa
`

// cjkSentences appear in about 2% of notes.
var cjkSentences = []string{
	"今日は畑でトマトの苗を植えました。",
	"堆肥の温度を毎朝記録しています。",
	"来週の会議では水やりの当番を決めます。",
	"雨が少ないので、貯水タンクを確認してください。",
	"このメモは検索のテスト用です。",
	"我们在社区花园里种了很多蔬菜。",
	"请在周末之前更新种植计划。",
	"土壤测试的结果下周出来。",
	"오늘은 상추와 허브를 수확했습니다.",
	"다음 주에 퇴비 작업을 합니다.",
	"夏の終わりにはカボチャが大きくなります。",
	"索引を作り直すと検索が速くなりました。",
}

// emoji are sprinkled into prose and headings.
var emoji = []string{
	"🌱", "🌻", "🍅", "🥕", "🐝", "🌧️", "☀️", "✅", "⚠️", "📌",
	"💡", "🔧", "🚀", "📝", "🧪", "🌍", "👩‍🌾", "🙂", "🎉", "🪴",
}

// mentionHandles and authors are small fixed sets, as in real vaults.
var (
	mentionHandles = []string{"claude", "garden-bot", "alice", "indexer", "reviewer"}
	authors        = []string{"Alice Moreau", "Bob Tanaka", "Carol Ng", "Dmitri Volkov", "Erin O'Hara", "Yuki Sato"}
	calloutKinds   = []string{"note", "tip", "warning", "info", "question", "todo"}
	languages      = []string{"go", "python", "sh", "js", "yaml"}
)

// buildVocab returns the vocabulary in Zipf rank order: English words first,
// the non-English words in the middle, and a deterministic tail of invented
// words so the list has a few thousand entries. It is the same for every
// seed. english is the number of English words at the front.
func buildVocab() (vocab []string, english int) {
	seen := make(map[string]bool)
	var out []string
	add := func(w string) {
		if w != "" && !seen[w] {
			seen[w] = true
			out = append(out, w)
		}
	}
	for _, w := range strings.Fields(englishWords) {
		add(w)
	}
	english = len(out)
	// Invented words from syllables, interleaved with the foreign words.
	onsets := []string{"b", "br", "c", "ch", "d", "dr", "f", "g", "gr", "h", "k", "l", "m", "n", "p", "pl", "r", "s", "st", "t", "tr", "v", "w", "z"}
	vowels := []string{"a", "e", "i", "o", "u", "ai", "ea", "ou", "y"}
	codas := []string{"", "", "n", "r", "l", "s", "th", "ck", "m", "nd", "x"}
	r := rand.New(rand.NewPCG(0x5eed, 0xf00d))
	other := strings.Fields(otherWords)
	for len(out) < 3200 {
		if len(out)%25 == 0 && len(other) > 0 {
			add(other[0])
			other = other[1:]
			continue
		}
		var b strings.Builder
		for n := 2 + r.IntN(3); n > 0; n-- {
			b.WriteString(onsets[r.IntN(len(onsets))])
			b.WriteString(vowels[r.IntN(len(vowels))])
		}
		b.WriteString(codas[r.IntN(len(codas))])
		add(b.String())
	}
	for _, w := range other {
		add(w)
	}
	return out, english
}
