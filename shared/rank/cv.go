package rank

import "fmt"

// Param is one tunable number and the values cross-validation tries for
// it, in order; the first is the starting point.
type Param struct {
	Name   string
	Values []float64
}

// Fold is one round of leave-one-set-out cross-validation: the values
// fitted on every set but Held, and what they score on Held.
type Fold struct {
	Held   string
	Values []float64
	Score  Metrics // on Held, with Values
}

// CV is the result of CrossValidate.
type CV struct {
	Params []Param
	Folds  []Fold
	// All are the values fitted on every set: what ships.
	All []float64
}

// Objective is the quality of a ranking over a set: the mean of recall@k
// and MRR.
func Objective(m Metrics) float64 { return (m.Recall + m.MRR) / 2 }

// CrossValidate fits params by coordinate ascent (each parameter in turn
// set to its best value, the others held, for sweeps rounds) on the mean
// Objective over the training sets, every set weighing the same whatever
// its size. Leaving out each set in turn gives the held-out figures; the
// last fit uses every set. eval scores the values x on set i.
func CrossValidate(sets []string, params []Param, sweeps int, eval func(x []float64, set int) Metrics) CV {
	cv := CV{Params: params}
	fit := func(train []int) []float64 {
		x := make([]float64, len(params))
		for i, p := range params {
			x[i] = p.Values[0]
		}
		memo := map[string]float64{}
		objective := func(x []float64) float64 {
			key := fmt.Sprint(x)
			if v, ok := memo[key]; ok {
				return v
			}
			s := 0.0
			for _, i := range train {
				s += Objective(eval(x, i))
			}
			s /= float64(len(train))
			memo[key] = s
			return s
		}
		best := objective(x)
		for range sweeps {
			moved := false
			for i, p := range params {
				for _, v := range p.Values {
					if v == x[i] {
						continue
					}
					y := append([]float64(nil), x...)
					y[i] = v
					if o := objective(y); o > best+1e-9 {
						best, x, moved = o, y, true
					}
				}
			}
			if !moved {
				break
			}
		}
		return x
	}
	for held := range sets {
		var train []int
		for i := range sets {
			if i != held {
				train = append(train, i)
			}
		}
		x := fit(train)
		cv.Folds = append(cv.Folds, Fold{Held: sets[held], Values: x, Score: eval(x, held)})
	}
	all := make([]int, len(sets))
	for i := range all {
		all[i] = i
	}
	cv.All = fit(all)
	return cv
}
