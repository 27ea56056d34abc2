# shellcheck shell=sh
# shellcheck disable=SC2154 # igb and the helpers are scenario.sh's
# The lab step of placement by PCIe distance (sourced by scenario.sh), on the
# guest's real tree: a second igb PF and a display controller (bochs-display,
# class 0x0380: a GPU's class) on two downstream ports of QEMU's PCIe switch
# (x3130-upstream, xio3130-downstream), the first igb PF behind a root port of
# its own. QEMU's xio3130-downstream has no ACS, so the VFs behind it share an
# IOMMU group with their PF and the bridge: the lab's nested domains take the
# first PF's VFs. The tree the agent reads (roles from the ports' PCIe
# capabilities, ACS as the kernel shows it), then claims near the "GPU": the
# second PF's VFs (PIX), the first PF's only when the bound allows (PHB: two
# root ports of pcie.0).
pcie_steps() {
	igb2=
	for d in /sys/bus/pci/devices/*; do
		[ "$(cat "$d/vendor")" = 0x8086 ] && [ "$(cat "$d/device")" = 0x10c9 ] &&
			[ "${d##*/}" != "$igb" ] && igb2=${d##*/}
	done
	gpu=
	for d in /sys/bus/pci/devices/*; do
		case $(cat "$d/class") in 0x03*) gpu=${d##*/} ;; esac
	done
	if [ -z "$igb2" ] || [ -z "$gpu" ]; then
		fail pcie "no second igb PF ($igb2) or display controller ($gpu) in the guest"
		return
	fi
	vfctl numvfs "$igb2" 2 >/run/out 2>&1
	udevadm settle --timeout=10
	api topo >/run/topo
	roles() { jq -r --arg pf "$1" '.pfs[] | select(.pci == $pf) | [.path[].role] | join(",")' /run/topo; }
	roles2=$(roles "$igb2")
	roles1=$(roles "$igb")
	acs=$(jq -c --arg pf "$igb2" '.pfs[] | select(.pci == $pf) | [.path[].acs]' /run/topo)
	dist=$(jq -r --arg g "$gpu" '.devices[] | select(.pci == $g) | [.distances[] | "\(.pf)=\(.distance)"] | join(" ")' /run/topo)
	# both VFs beside the GPU, then one more within PIX (refused), then one within PHB
	a=$(api alloc igb --owner vm:near -n 2 --near "$gpu" --max-distance PIX)
	b=$(api alloc igb --owner vm:near --near "$gpu" --max-distance PIX)
	c=$(api alloc igb --owner vm:near --near "$gpu" --max-distance PHB)
	a_pfs=$(echo "$a" | jq -r '[.vfs[].pf] | unique | join(",")')
	c_pf=$(echo "$c" | jq -r '.vfs[0].pf')
	for id in $(echo "$a" | jq -r .id) $(echo "$c" | jq -r .id); do vfctl release "$id" >>/run/out 2>&1; done
	vfctl numvfs "$igb2" 0 >>/run/out 2>&1
	udevadm settle --timeout=10
	if [ "$roles2" = root_port,switch_upstream,switch_downstream ] && [ "$roles1" = root_port ] &&
		echo "$dist" | grep -q "$igb2=PIX" && echo "$dist" | grep -q "$igb=PHB" &&
		[ "$a_pfs" = "$igb2" ] && echo "$b" | grep -q "the closest free VFs are PHB (" &&
		[ "$c_pf" = "$igb" ] && [ "$(cat "/sys/bus/pci/devices/$igb2/sriov_numvfs")" = 0 ]; then
		pass "pcie: $igb2 under $roles2 (ACS $acs), $igb under $roles1; GPU-class $gpu: $dist; near it within PIX 2 VFs of $igb2, then refused (PHB next), within PHB one of $igb"
	else
		fail pcie "roles '$roles2' / '$roles1', distances '$dist': got $a_pfs, then '$(echo "$b" | tr '\n' ' ')', then $c_pf; $(tr '\n' ' ' </run/out) topo: $(jq -c . /run/topo | head -c 1500)"
	fi
}
