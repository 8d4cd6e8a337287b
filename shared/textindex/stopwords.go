package textindex

import (
	"strings"
	"sync"
)

// stopwordLists are the function words of each language of Langs, and, for
// English, the question verbs agents use. Words that are common content
// words in English (door, hat, son, war, ...) are left out of the other
// languages' lists, since every list applies to every text.
var stopwordLists = map[Lang]string{
	English: `a about above after again against all almost also am an and any anyone anything are aren as at
	be because been before being below between both but by can cannot could couldn
	did didn do does doesn doing don done down during each either else ever every few for from further
	get gets getting got had hadn has hasn have haven having he her here hers herself him himself his how
	however i if in into is isn it its itself just let lets like ll may me might mine more most much must
	my myself need needs neither no nor not now of off often on once one only onto or other others ought
	our ours ourselves out over own per please rather re really same shall shan she should shouldn so
	some something somehow such than that thats the their theirs them themselves then there these they
	this those though through thus to too under until up upon us use very via ve was wasn way ways we
	were weren what whats when where whether which while who whom whose why will with within without
	won would wouldn yes yet you your yours yourself yourselves
	describe explain find show tell`,
	German: `aber als am an auch auf aus bei bis bitte da damit dann das dass dein deine dem den der des
	dich die dir doch dort du durch ein eine einem einen einer eines er es etwa euch für gegen habe haben
	hier ich ihm ihn ihr im in ist ja jede jeder jedes kann kein keine können mein meine mich mir mit
	muss nach nicht noch nur ob oder ohne sehr sein seine sich sie sind soll über um und uns unser unter
	vom von vor warum was weil welche welcher welches wenn wer werden wie wir wird wo wurde zu zum zur`,
	French: `au aux avec avoir ce ceci cela ces cet cette comment dans des du elle elles en est et être eux il ils
	je la le les leur leurs lui ma mais me mes moi mon même ne nos notre nous ou où par pas plus pourquoi
	quand que quel quelle quelles quels qui quoi sa se ses sont sur ta te tes toi ton tu un une vos
	votre vous`,
	Spanish: `al como cómo con cual cuál cuando cuándo de del donde dónde el él ella ellas ellos es esa ese esta
	está están este esto estos fue la las le les lo los más mi mis muy nos nosotros para pero por porque
	qué quien quién se ser si sí su sus también tu tú un una uno unos unas usted y yo`,
	Italian: `che chi come cosa della delle dello dei degli di dove gli il io lei loro lui ma mio nel nella nelle
	non noi per perché più questa questo quella quello sono su sua suo tra voi è`,
	Portuguese: `ao aos como da das do dos ela elas ele eles em essa esse esta este eu isso isto mais meu minha na
	nas não nós num numa os ou pela pelo pelos porque qual quando quem são sem seu sua também um uma
	você`,
	Dutch: `aan al dat de deze die dit een en er geen haar had heb hebben het hij hun ik in is je jij kan
	maar met mij mijn naar niet nog of om ons ook op over te tot uit van voor waar waarom wanneer wat
	welke wie wij wordt zijn zij ze zich`,
	Swedish: `att av de dem den denna deras det detta du där efter ej eller en ett från för han hans har
	henne hennes hon honom hur här inte jag kan mig min mitt med men mot mycket ni nu när och om oss på
	samma sig sin sina själv ska skulle som till under upp ut utan vad var vara varför vart vem vi vid
	än är över`,
	Danish: `af alle andet andre at blev blive bliver da de dem den denne der deres det dette din disse
	 du efter eller en er et for fra han hans har havde have hende hendes her hos hun hvad
	hvis hvor hvordan hvorfor ikke ind jeg jer jo kan kunne mange med meget men mig min mine mit
	 ned noget nogle nu når og også om op os over på sig sin sine sit skal skulle som sådan thi til ud
	under var vi vil ville vor være været`,
	Norwegian: `av begge bli blir ble da de deg dei deim deira deires dem den denne der dere deres det dette
	di din disse ditt du dykk eg ein eit eitt eller elles enn er et ett etter for fordi fra før ha
	hadde han hans har hennar henne hennes her hjå ho honom hoss hossen hun hva hvem hver hvilke
	hvilken hvis hvor hvordan hvorfor ikke ikkje ingen inn jeg kan kunne kva kvar kvarhelst kven kvi
	korleis mange me med meg meget mellom men mi min mine mitt mot mye noe noen nå når og også om
	opp oss over på samme seg selv si sia sidan siden sin sine sitt sjøl skal skulle slik som somme
	somt til um upp ut uten var vart varte ved vere verte vi vil ville vore vors vort være vært å`,
	Finnish: `ei eivät emme en et ette he heidän heitä hän häneen hänen häntä ja jos jotka kanssa koska
	kuin kuka kun me meidän meitä miksi mikä milloin minkä minua minun minä missä mitä mukaan mutta ne
	niiden niin nyt ole olen olet olemme olette olivat olla oli olin olit olisi on ovat se sekä sen
	siellä sinua sinun sinä siihen sitä tai te teidän teitä tuo tämä tässä vaan vai voi yli`,
	Russian: `а без более бы был была были было быть в вам вас весь во вот все всего всех вы где да даже для
	до его ее её если есть еще ещё же за здесь и из или им их к как какая какие какой когда кто ли
	либо мне может мы на над нам нас не него нее неё нет ни них но ну о об однако он она они оно от
	очень по под при с со так также такой там те тем то того тоже той только том ты у уже хотя чего
	чей чем что чтобы чье чья эта эти это я`,
}

// stopLangs maps each stopword to the languages whose list holds it
// (built on first use, not at start-up).
var stopLangs = sync.OnceValue(func() map[string][]Lang {
	m := map[string][]Lang{}
	for _, l := range Langs {
		for _, w := range strings.Fields(stopwordLists[l]) {
			m[w] = append(m[w], l)
		}
	}
	return m
})
