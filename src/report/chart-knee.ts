import type { TopLevelSpec } from 'vega-lite'

/** One layer of a layered chart. */
export type Layer = Extract<TopLevelSpec, { layer: unknown }>['layer'][number]

/**
 * The knee drawn on a chart: a dashed red rule at the knee level with its label. The mark is named
 * `knee` (Vega gives it the class `knee_marks`) and carries an aria-label, so a reader of the SVG,
 * a screen reader or a test can find it. No layers when the run has no knee.
 */
export function kneeLayers(
  knee: number | null,
  axis: { field: string; type: 'quantitative' | 'ordinal' },
  {
    label = `knee ${knee}`,
    labelY = 2,
    name = 'knee',
    color = '#c0392b',
  }: {
    label?: string
    /** Pixels from the top of the plot to the label: below other labels drawn at the top. */
    labelY?: number
    /** The mark's name (two runs' knees on one chart need two). */
    name?: string
    color?: string
  } = {},
): Layer[] {
  if (knee === null) return []
  const values = [{ [axis.field]: knee, label }]
  return [
    {
      name,
      data: { values },
      mark: {
        type: 'rule',
        color,
        strokeDash: [6, 3],
        strokeWidth: 1.5,
        aria: true,
        description: label,
      },
      encoding: { x: { field: axis.field, type: axis.type } },
    },
    {
      data: { values },
      mark: { type: 'text', color, align: 'left', baseline: 'top', dx: 4, y: labelY, fontSize: 11 },
      encoding: { x: { field: axis.field, type: axis.type }, text: { field: 'label' } },
    },
  ]
}
