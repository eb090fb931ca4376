// Student's t distribution: the quantile that confidence and prediction intervals need.
#pragma once

namespace wattlab {

// The p-quantile of Student's t with df degrees of freedom (p in (0.5, 1)), from its CDF through
// the regularized incomplete beta function, solved by bisection.
double student_t_quantile(double p, double df);

}  // namespace wattlab
