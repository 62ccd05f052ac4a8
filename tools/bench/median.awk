# median(a, n): the median of a[1..n], sorting a in place (insertion sort:
# the benchmark scripts take medians of a few rounds). The scripts put this
# file's text before their own program: awk "$(cat tools/bench/median.awk)"'...'.
function median(a, n,   i, j, t) {
  for (i = 2; i <= n; i++)
    for (j = i; j > 1 && a[j - 1] > a[j]; j--) { t = a[j]; a[j] = a[j - 1]; a[j - 1] = t }
  return n % 2 ? a[(n + 1) / 2] : (a[n / 2] + a[n / 2 + 1]) / 2
}
