// Line charts with uPlot, loaded on the first page that draws one.
import { h, fill } from './ui.js';

const COLORS = ['#2457c5', '#c0392b', '#1e8449', '#8e44ad', '#b9770e', '#117a8b', '#6c3483', '#515a5a'];

/**
 * A line chart in `container`. `series` are [{label, scale?, points?}]; `xRange` is [min, max] if fixed;
 * `setData([xs, ...ys])` redraws it.
 * The canvas has a text alternative: `summary()` of the latest data, kept in the figure's caption.
 */
export async function lineChart(container, { title, time = false, series, yLabel, y2Label, summary, xRange }) {
  const { default: uPlot } = await import('../vendor/uPlot.esm.js');
  const caption = h('figcaption', { class: 'muted' }, title);
  const plot = h('div', { role: 'img', 'aria-label': title });
  fill(container, h('figure', { class: 'chart' }, plot, caption));
  const axes = [{ label: time ? undefined : 'step' }, { label: yLabel }];
  // A fixed x range keeps a lone point from stretching the axis over years.
  const scales = { x: xRange ? { time, range: () => xRange } : { time } };
  if (series.some((s) => s.scale === 'y2')) {
    axes.push({ scale: 'y2', side: 1, label: y2Label, grid: { show: false } });
    scales.y2 = { range: [0, 1] };
  }
  const chart = new uPlot(
    {
      width: Math.max(320, Math.min(900, container.clientWidth || 640)),
      height: 260,
      scales,
      axes,
      series: [
        {},
        ...series.map((s, i) => ({
          label: s.label,
          scale: s.scale || 'y',
          stroke: COLORS[i % COLORS.length],
          width: 2,
          points: { show: s.points ?? false },
          spanGaps: true,
        })),
      ],
    },
    [[], ...series.map(() => [])],
    plot,
  );
  return {
    setData(data) {
      chart.setData(data);
      if (summary) caption.textContent = `${title}. ${summary(data)}`;
    },
  };
}
