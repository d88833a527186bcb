// Preloaded (`node --import`) into a kpt-variants process under test, and so into its threads: the
// process's clock reads KPT_VARIANTS_TEST_CLOCK_AHEAD_MS milliseconds ahead of the system's. A test
// that needs "two seconds later" (a written file's metadata is trusted only two seconds after the
// write, orchestrator/package/directory.ts) runs the process later instead of sleeping.
const ahead = Number(process.env.KPT_VARIANTS_TEST_CLOCK_AHEAD_MS ?? 0)
if (!Number.isFinite(ahead))
  throw new Error(`KPT_VARIANTS_TEST_CLOCK_AHEAD_MS is not a number: ${process.env.KPT_VARIANTS_TEST_CLOCK_AHEAD_MS}`)
const systemNow = Date.now
Date.now = () => systemNow() + ahead
