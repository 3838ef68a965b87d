package report

import _ "embed"

// echartsJS is Apache ECharts 5.6.0's common build (echarts/README.md):
// inlined into every report so that it opens with no network.
//
//go:embed echarts/echarts.common.min.js
var echartsJS string

// EChartsVersion is the version of the embedded ECharts.
const EChartsVersion = "5.6.0"
