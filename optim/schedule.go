package optim

// Schedule gives the learning rate for a step (the number of optimizer
// steps already taken, from 0) in an epoch (from 0).
type Schedule interface {
	LR(step, epoch int) float64
}

// ScheduleFunc adapts a function to Schedule.
type ScheduleFunc func(step, epoch int) float64

// LR calls f.
func (f ScheduleFunc) LR(step, epoch int) float64 { return f(step, epoch) }

// Constant is a fixed learning rate.
func Constant(lr float64) Schedule {
	return ScheduleFunc(func(int, int) float64 { return lr })
}

// StepLR starts at lr and multiplies it by gamma from each listed epoch on
// (PyTorch's MultiStepLR): StepLR(1e-3, 0.1, 10, 20) gives 1e-3 in epochs
// 0–9, 1e-4 in 10–19 and 1e-5 from 20. An epoch listed twice applies gamma
// twice.
func StepLR(lr, gamma float64, epochs ...int) Schedule {
	ms := append([]int(nil), epochs...)
	return ScheduleFunc(func(_, epoch int) float64 {
		r := lr
		for _, e := range ms {
			if epoch >= e {
				r *= gamma
			}
		}
		return r
	})
}

// LinearWarmupDecay ramps the rate linearly up to lr over warmupSteps
// steps, then down linearly to reach 0 at totalSteps (and stays 0 after),
// the usual BERT fine-tuning schedule. Unlike Hugging Face's
// get_linear_schedule_with_warmup, whose first step has rate 0, step s of
// the warm-up gets lr·(s+1)/warmupSteps, so no step is wasted; the decay
// matches it: lr·(totalSteps−s)/(totalSteps−warmupSteps).
func LinearWarmupDecay(lr float64, warmupSteps, totalSteps int) Schedule {
	return ScheduleFunc(func(step, _ int) float64 {
		switch {
		case step >= totalSteps:
			return 0
		case step < warmupSteps:
			return lr * float64(step+1) / float64(warmupSteps)
		default:
			return lr * float64(totalSteps-step) / float64(totalSteps-warmupSteps)
		}
	})
}
