// Sections that load their data when they are first opened (reached from the navigation or
// scrolled to), instead of waiting for a button press or loading everything at sign-in.

/** Call ``opened`` the first time ``section`` comes into view; → whether it has been seen. */
export function onFirstView(section, opened) {
  let seen = false;
  const observer = new IntersectionObserver((entries) => {
    if (!entries.some((e) => e.isIntersecting) || seen) return;
    seen = true;
    observer.disconnect();
    opened();
  });
  observer.observe(section);
  return () => seen;
}

/** ``load(current, ...args)`` wrapped: ``current()`` tells a call whether it is still the latest, so of overlapping calls only the latest draws. */
export function latestOnly(load) {
  let latest = 0;
  return async (...args) => {
    const mine = ++latest;
    return load(() => mine === latest, ...args);
  };
}
