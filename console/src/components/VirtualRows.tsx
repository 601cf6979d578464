// Row virtualisation for big tables: only the rows in (and just around) the visible window are in the DOM, so a
// page of 1,000 rows costs as much as one of 30. Rows have a fixed height.
import type { ComponentChildren } from "preact";
import { useState } from "preact/hooks";

export function VirtualRows<T>({
  rows,
  rowHeight = 32,
  height = 560,
  header,
  render,
  testId,
}: {
  rows: T[];
  rowHeight?: number;
  height?: number;
  header: ComponentChildren;
  render: (row: T, index: number) => ComponentChildren;
  testId?: string;
}) {
  const [top, setTop] = useState(0);
  const overscan = 8;
  const first = Math.max(0, Math.floor(top / rowHeight) - overscan);
  const last = Math.min(rows.length, Math.ceil((top + height) / rowHeight) + overscan);
  const visible = rows.slice(first, last);
  const viewHeight = Math.min(height, rows.length * rowHeight + 2);
  return (
    <div class="vtable" data-testid={testId}>
      <div class="vhead">{header}</div>
      <div class="vbody" style={{ height: `${viewHeight}px` }} onScroll={(e) => setTop((e.target as HTMLElement).scrollTop)}>
        <div style={{ height: `${rows.length * rowHeight}px`, position: "relative" }}>
          {visible.map((r, i) => (
            <div class="vrow" key={first + i} style={{ top: `${(first + i) * rowHeight}px`, height: `${rowHeight}px` }}>
              {render(r, first + i)}
            </div>
          ))}
        </div>
      </div>
    </div>
  );
}
