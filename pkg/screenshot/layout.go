package screenshot

// LayoutScript, evaluated in a Batkube report's page, returns what a
// reader would see broken in its layout, as sentences (none when it reads
// well). It measures what the browser drew, with the browser's fonts:
//
//   - the page is wider than the window (it scrolls sideways);
//   - a table is wider than its container (a cell pushes out of sight), or
//     one outside a horizontally scrolling block (class "scroll") ends past
//     the window's right edge;
//   - a chart's text (title, axis or legend label) is drawn partly outside
//     the chart's box: the SVG clips it;
//   - a chart's text lies over the chart's data area, which each
//     <svg class="chart"> gives as data-plot-area="x y width height" in its
//     viewBox's units (a legend over the curves); a chart without it is a
//     defect too.
//
// Boxes may overlap, or pass an edge, by a pixel (sub-pixel rounding).
const LayoutScript = `(() => {
  const tolerance = 1;
  const defects = [];
  const px = v => Math.round(v);
  const root = document.documentElement;
  const windowWidth = root.clientWidth;
  if (root.scrollWidth > windowWidth + tolerance) {
    defects.push('the page is ' + root.scrollWidth + ' px wide, wider than the window (' + windowWidth + ' px)');
  }
  const nameOf = el => el.id ? '#' + el.id : (el.className ? el.tagName.toLowerCase() + '.' + el.className : el.tagName.toLowerCase());
  for (const table of document.querySelectorAll('table')) {
    const box = table.getBoundingClientRect();
    const parent = table.parentElement;
    if (box.width > parent.clientWidth + tolerance) {
      defects.push('table ' + nameOf(table) + ' is ' + px(box.width) + ' px wide, wider than its container (' + parent.clientWidth + ' px)');
    }
    if (!table.closest('.scroll') && box.right > windowWidth + tolerance) {
      defects.push('table ' + nameOf(table) + ' ends at ' + px(box.right) + ' px, past the window (' + windowWidth + ' px)');
    }
  }
  const overlap = (a, b) => Math.min(a.right, b.right) - Math.max(a.left, b.left) > tolerance &&
                            Math.min(a.bottom, b.bottom) - Math.max(a.top, b.top) > tolerance;
  for (const svg of document.querySelectorAll('svg.chart')) {
    const box = svg.getBoundingClientRect();
    const view = svg.viewBox.baseVal;
    const scale = box.width / view.width;
    const area = (svg.dataset.plotArea || '').split(' ').map(Number);
    let data = null;
    if (area.length === 4 && area.every(Number.isFinite)) {
      data = {left: box.left + area[0] * scale, top: box.top + area[1] * scale,
              right: box.left + (area[0] + area[2]) * scale, bottom: box.top + (area[1] + area[3]) * scale};
    } else {
      defects.push('chart ' + svg.id + ' gives no data-plot-area');
    }
    for (const text of svg.querySelectorAll('text')) {
      const t = text.getBoundingClientRect();
      const what = 'chart ' + svg.id + ': text "' + text.textContent + '"';
      if (t.width === 0 || text.textContent.trim() === '') {
        continue;
      }
      if (t.left < box.left - tolerance || t.right > box.right + tolerance ||
          t.top < box.top - tolerance || t.bottom > box.bottom + tolerance) {
        defects.push(what + ' is clipped: it spans ' + px(t.left) + '–' + px(t.right) + ' × ' + px(t.top) + '–' + px(t.bottom) +
                     ' px, the chart ' + px(box.left) + '–' + px(box.right) + ' × ' + px(box.top) + '–' + px(box.bottom));
      }
      if (data && overlap(t, data)) {
        defects.push(what + ' lies over the data area');
      }
    }
  }
  return defects;
})()`
