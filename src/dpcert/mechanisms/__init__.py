"""Private measurements (alias ``dp.m``): ``make_*`` constructors and ``then_*`` partials."""

from dpcert.mechanisms.calibration import (
    analytic_gaussian_scale,
    classic_gaussian_scale,
    gaussian_scale,
    make_gaussian_approx,
    then_gaussian_approx,
    zcdp_to_approx_epsilon,
)
from dpcert.mechanisms.continual import (
    ContinualSumStream,
    continual_sum_errors,
    make_continual_sum,
    open_continual_sum,
    then_continual_sum,
)
from dpcert.mechanisms.estimators import FrequencyEstimate, estimate_frequencies
from dpcert.mechanisms.exponential import (
    make_exponential,
    make_permute_and_flip,
    make_report_noisy_max,
    then_exponential,
    then_permute_and_flip,
    then_report_noisy_max,
)
from dpcert.mechanisms.gaussian import make_gaussian, then_gaussian
from dpcert.mechanisms.histogram import make_histogram, then_histogram
from dpcert.mechanisms.laplace import make_laplace, then_laplace
from dpcert.mechanisms.quantile import make_quantile, make_quantiles, then_quantile, then_quantiles
from dpcert.mechanisms.randomized_response import (
    make_randomized_response,
    make_randomized_response_bool,
    make_rappor,
)
from dpcert.mechanisms.rappor_bloom import (
    RapporBloomParams,
    RapporReports,
    instantaneous_report,
    make_rappor_bloom,
    make_rappor_bloom_permanent,
)
from dpcert.mechanisms.rappor_decode import (
    BitCountEstimate,
    RapporDecoding,
    decode_rappor_bloom,
    estimate_bit_counts,
)
from dpcert.mechanisms.sparse_vector import make_sparse_vector, then_sparse_vector
from dpcert.mechanisms.threshold import make_partition_selection, then_partition_selection

__all__ = [
    "BitCountEstimate",
    "ContinualSumStream",
    "RapporBloomParams",
    "RapporDecoding",
    "RapporReports",
    "decode_rappor_bloom",
    "estimate_bit_counts",
    "instantaneous_report",
    "make_rappor_bloom",
    "make_rappor_bloom_permanent",
    "FrequencyEstimate",
    "analytic_gaussian_scale",
    "classic_gaussian_scale",
    "continual_sum_errors",
    "estimate_frequencies",
    "gaussian_scale",
    "make_continual_sum",
    "open_continual_sum",
    "make_exponential",
    "make_gaussian_approx",
    "make_histogram",
    "make_partition_selection",
    "make_permute_and_flip",
    "make_quantile",
    "make_quantiles",
    "make_report_noisy_max",
    "make_sparse_vector",
    "then_continual_sum",
    "then_exponential",
    "then_gaussian_approx",
    "then_histogram",
    "then_partition_selection",
    "then_permute_and_flip",
    "then_quantile",
    "then_quantiles",
    "then_report_noisy_max",
    "then_sparse_vector",
    "zcdp_to_approx_epsilon",
    "make_gaussian",
    "make_laplace",
    "make_randomized_response",
    "make_randomized_response_bool",
    "make_rappor",
    "then_gaussian",
    "then_laplace",
]
